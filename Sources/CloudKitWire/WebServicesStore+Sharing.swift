import Foundation
import ShareKit

// Sharing, change feeds, the schema and maintenance over Web Services: the requests `WebServicesStore` sends
// for the `Store` calls beyond zones and records.
extension WebServicesStore {
    // MARK: Sharing

    public func resolveShare(url: String, as user: UserRecordName) async throws -> ShareMetadata {
        try await shareRequest(.recordsResolve, url: url, as: user)
    }

    public func acceptShare(url: String, as user: UserRecordName) async throws -> ShareMetadata {
        try await shareRequest(.recordsAccept, url: url, as: user)
    }

    /// One `records/accept` request per 200 shares.
    public func acceptShares(urls: [String], as user: UserRecordName) async throws
        -> [Result<ShareMetadata, ShareError>]
    {
        try await inChunks(urls) { chunk in
            let guids = chunk.map(StableName.shortGUID(fromURL:))
            let response: ShareResultsResponse = try await send(
                .recordsAccept, database: .public, body: ShortGUIDsRequest(guids), as: user)
            var results: [Result<ShareMetadata, ShareError>] = []
            for (index, guid) in guids.enumerated() {
                guard index < response.results.count else {
                    results.append(
                        .failure(
                            ShareError(.internalError, "records/accept answered no result", subject: "share \(guid)")))
                    continue
                }
                do {
                    results.append(.success(try response.results[index].metadata()))
                } catch let error as ShareError {
                    results.append(.failure(error))
                }
            }
            return results
        }
    }

    /// Leaves as CloudKit does: the participant deletes the share from its shared database.
    public func leaveShare(recordName: String, in zoneID: ZoneID, as user: UserRecordName) async throws {
        var record = WireRecord(recordName: recordName, recordType: shareRecordType)
        record.recordChangeTag = nil
        let request = ModifyRecordsRequest(
            operations: [.init(operationType: OperationKind.forceDelete.rawValue, record: record)],
            zoneID: WireZoneID(zoneID), atomic: false)
        let (response, resent): (RecordsResponse, Bool) = try await sendNoting(
            .recordsModify, database: .shared, body: request, as: user)
        guard let error = response.records.first?.error(in: zoneID) else { return }
        // Sent again after a lost answer: the earlier attempt left, and the share is gone from the shared
        // database.
        if resent, error.code == .notFound || error.code == .zoneNotFound { return }
        throw error
    }

    // MARK: Changes

    public func databaseChanges(in database: DatabaseScope, since token: ChangeToken?, as user: UserRecordName)
        async throws -> DatabaseChanges
    {
        let response: DatabaseChangesResponse = try await send(
            .changesDatabase, database: database,
            body: DatabaseChangesRequest(syncToken: token?.rawValue), as: user)
        return response.changes
    }

    public func zoneChanges(
        _ zoneID: ZoneID, in database: DatabaseScope, since token: ChangeToken?, resultsLimit: Int?,
        as user: UserRecordName
    ) async throws -> ZoneChanges {
        // With the other zones' reads made at the same moment, in one request (`ZoneFeedBatches`).
        let answer = try await feeds.read(
            ZoneChangesRequest.ZoneRequest(
                zoneID: WireZoneID(zoneID), syncToken: token?.rawValue, resultsLimit: resultsLimit),
            as: ZoneFeedBatches.Key(user: user, database: database))
        var changes = try answer.changes(in: zoneID)
        changes.changedRecords = try await knowingAssetContents(changes.changedRecords)
        return changes
    }

    // MARK: Schema

    public var environment: CloudKitEnvironment { CloudKitEnvironment(rawValue: endpoint.environment) ?? .development }

    public func inEnvironment(_ environment: CloudKitEnvironment) -> any Store {
        environment == self.environment ? self : WebServicesStore(sharing: self, environment: environment)
    }

    public func schema(in environment: CloudKitEnvironment, as user: UserRecordName) async throws -> Schema {
        try requireSchemaOperations()
        guard environment == self.environment else {
            return try await inEnvironment(environment).schema(in: environment, as: user)
        }
        let response: SchemaResponse = try await send(.schemaLookup, database: .public, body: nil as String?, as: user)
        return response.schema
    }

    public func extendSchema(_ schema: Schema, as user: UserRecordName) async throws -> [SchemaChange] {
        try requireSchemaOperations()
        guard environment == .development else {
            return try await inEnvironment(.development).extendSchema(schema, as: user)
        }
        let response: SchemaChangesResponse = try await send(
            .schemaExtend, database: .public, body: SchemaResponse(schema: schema), as: user)
        return response.changes
    }

    public func deploySchema(as user: UserRecordName) async throws -> [SchemaChange] {
        try requireSchemaOperations()
        let response: SchemaChangesResponse = try await send(
            .schemaDeploy, database: .public, body: [String: String](), as: user)
        return response.changes
    }

    /// Apple's schema lives outside Web Services: refuse with what to use instead.
    private func requireSchemaOperations() throws {
        guard endpoint.kind == .emulator else {
            throw ShareError(
                .badRequest,
                "\(displayName) does not serve schemas over Web Services: export Apple's with "
                    + "`xcrun cktool export-schema`, import a .ckdb from `sharelane schema export` with "
                    + "`xcrun cktool import-schema`, and deploy in the CloudKit Console")
        }
    }

    // MARK: Maintenance

    public func reset() async throws {
        throw ShareError(
            .badRequest,
            "\(displayName) cannot be reset from here: reset works on local stores only (sqlite:, memory:); "
                + "stop `sharelane serve` and delete its store file instead")
    }

    private func shareRequest(_ operation: WireOperation, url: String, as user: UserRecordName) async throws
        -> ShareMetadata
    {
        let guid = StableName.shortGUID(fromURL: url)
        let response: ShareResultsResponse = try await send(
            operation, database: .public, body: ShortGUIDsRequest([guid]), as: user)
        guard let first = response.results.first else {
            throw ShareError(.internalError, "\(operation) answered no result", subject: "share \(guid)")
        }
        return try first.metadata()
    }
}

// MARK: - ReadsZoneFeedsTogether

extension WebServicesStore: ReadsZoneFeedsTogether {
    package var zoneFeedsPerRequest: Int { Self.zoneFeedsPerRequest }
}
