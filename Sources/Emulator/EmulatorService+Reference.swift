import CloudKitWire
import Foundation
import Hummingbird
import ShareKit

// Answers as Apple's reference writes them (Docs/Reference/Dictionaries.md) where the store's own answer is
// shaped otherwise: the Zone Dictionary whole, the ShortGUID Result Dictionary whole, the live service's
// words for a create that meets a record and a forced delete that meets none, and the two `users/lookup`
// forms CloudKit JS 1.x reads.
extension EmulatorService {
    // MARK: Zones

    /// The reference's Zone Dictionary: `zoneID`, `syncToken` and `atomic`. serve's store orders every change
    /// by one sequence (`ShareStoreSQLite.ChangeSequence`), so the database's current token is each zone's
    /// current point too: `records/changes` or `changes/zone` from it answers only what changes after it. A
    /// custom zone is atomic, as `records/modify` treats it, and so is the public database's default zone as
    /// Apple's captured `zones/list` lists it (though an atomic batch there is refused, as in every default
    /// zone: the capture wins over the rule); a private or shared database's default zone is not.
    func zoneDictionaries(
        _ zones: [WireZone], store: any Store, database: DatabaseScope, as user: UserRecordName
    ) async -> [WireZone] {
        guard zones.contains(where: { $0.serverErrorCode == nil && $0.deleted != true }) else { return zones }
        let token = try? await store.databaseChanges(in: database, since: nil, as: user).token
        return zones.map { zone in
            guard zone.serverErrorCode == nil, zone.deleted != true, let zoneID = zone.zoneID else { return zone }
            var zone = zone
            zone.syncToken = token.map { OpaqueText.written($0.rawValue) }
            zone.atomic = database == .public || zoneID.zoneName != defaultZoneName
            return zone
        }
    }

    // MARK: Shares

    /// `records/resolve` and `records/accept`: one ShortGUID Result Dictionary per short GUID, in order, with
    /// the container and environment the request named, the database the share is in for the caller (the
    /// owner's private, anyone else's shared), and the root record when `shouldFetchRootRecord` asks for it.
    func shareResults(
        _ operation: WireOperation, body: Data, store: any Store, container: String, as user: UserRecordName
    ) async throws -> ByteBuffer {
        let request = try decode(ShortGUIDsRequest.self, from: body)
        try checkLimit(request.shortGUIDs.count, "shortGUIDs")
        var outcomes: [Result<ShareMetadata, ShareError>] = []
        if operation == .recordsAccept {
            // All of the request's shares in one call: the SQLite store accepts them in one transaction.
            outcomes = try await store.acceptShares(urls: request.shortGUIDs.map(\.value), as: user)
        } else {
            for guid in request.shortGUIDs {
                do {
                    outcomes.append(.success(try await store.resolveShare(url: guid.value, as: user)))
                } catch let error as ShareError {
                    outcomes.append(.failure(error))
                }
            }
        }
        var results: [WireShareMetadata] = []
        for (guid, outcome) in zip(request.shortGUIDs, outcomes) {
            switch outcome {
            case .success(let metadata):
                let root =
                    guid.shouldFetchRootRecord == true
                    ? try await rootRecord(of: metadata, store: store, desiredKeys: guid.rootRecordDesiredKeys) : nil
                results.append(
                    WireShareMetadata(
                        metadata, shortGUID: guid.value, shouldFetchRootRecord: guid.shouldFetchRootRecord,
                        container: container, environment: store.environment, caller: user, rootRecord: root))
            case .failure(let error):
                if operation == .recordsAccept { RequestNotes.refused(error, subject: guid.value) }
                results.append(WireShareMetadata(shortGUID: guid.value, error: error))
            }
        }
        return try encode(ShareResultsResponse(results: results))
    }

    /// The root record of a hierarchy share, as its owner holds it (nil for a zone-wide share, which has
    /// none). Read as the owner: whoever the store lets resolve a share is shown what it shares before
    /// accepting it, as Apple's service shows an invitee the root record.
    private func rootRecord(of metadata: ShareMetadata, store: any Store, desiredKeys: [String]?) async throws
        -> WireRecord?
    {
        guard let name = metadata.rootRecordName else { return nil }
        let found = try await store.lookupRecords(
            [name], in: ZoneID(zoneName: metadata.zoneID.zoneName), database: .private,
            as: metadata.share.ownerRecordName)
        guard case .saved(let record)? = found.first else { return nil }
        var wire = WireRecord(record).answering(desiredKeys: desiredKeys, numbersAsStrings: nil)
        wire.zoneID = WireZoneID(metadata.zoneID)
        return wire
    }

    // MARK: Records as the live service answers them

    /// A `forceDelete` of a record that does not exist succeeds on the live service (as a client's tests
    /// recorded against Apple's public database), where the store answers `NOT_FOUND`: such an answer is
    /// `deleted` here. Only in the caller's own private database and the public one (where that live answer was
    /// recorded), and only the store's own `NOT_FOUND` for a record: in the shared database a forced delete of
    /// something the caller cannot reach keeps the store's refusal (a stranger is never told a delete happened
    /// in someone else's zone), and a participant leaving a share is not a record. An atomic request the store refused for those alone (every other operation `ATOMIC_ERROR`) was
    /// applied nowhere; the rest of it is sent to the store again, alone.
    /// `run` sends operations to the store and answers their outcomes in order.
    static func forceDeletingAsLive(
        _ operations: [RecordOperation], database: DatabaseScope, atomic: Bool,
        run: ([RecordOperation]) async throws -> [RecordOutcome]
    ) async throws -> [RecordOutcome] {
        let outcomes = try await run(operations)
        guard database != .shared else { return outcomes }
        let missing = Set(
            operations.indices.filter { index in
                guard operations[index].kind == .forceDelete, case .record = operations[index].item,
                    index < outcomes.count
                else { return false }
                return outcomes[index].error?.code == .notFound
            })
        guard !missing.isEmpty else { return outcomes }
        let others = operations.indices.filter { !missing.contains($0) }
        if atomic, others.contains(where: { outcomes[$0].error != nil }) {
            // Refused for the missing records alone: the rest again, without them.
            guard others.allSatisfy({ outcomes[$0].error == nil || outcomes[$0].error?.code == .atomicError })
            else { return outcomes }
            var again = (others.isEmpty ? [] : try await run(others.map { operations[$0] })).makeIterator()
            return operations.indices.map { index in
                missing.contains(index)
                    ? .deleted(recordName: operations[index].recordName)
                    : again.next() ?? outcomes[index]
            }
        }
        return operations.indices.map { index in
            missing.contains(index) ? .deleted(recordName: operations[index].recordName) : outcomes[index]
        }
    }

    /// A `create` the store refused as `EXISTS` answers `CONFLICT`, "record to insert already exists", as the
    /// live service answers it; the `http:` and `cloudkit:` stores read it back as `EXISTS`.
    static func conflictForExistingCreates(_ operations: [RecordOperation], _ outcomes: [RecordOutcome])
        -> [RecordOutcome]
    {
        zip(operations, outcomes).map { operation, outcome in
            guard operation.kind == .create, case .failed(let name, let error) = outcome, error.code == .exists else {
                return outcome
            }
            return .failed(
                recordName: name,
                ShareError(.conflict, "record to insert already exists: \(error.reason)", subject: error.subject))
        }
    }

    // MARK: Users

    /// `users/lookup/email`: the discoverable users (and the caller) in full; an address no discoverable user
    /// has answers the user info with only the address filled, as Apple's does (CloudKit JS 1.x turns a
    /// per-user error here into a failed lookup), the way `users/discover` answers it.
    func lookupEmails(_ body: Data, store: any Store, as user: UserRecordName) async throws -> ByteBuffer {
        let request = try decode(LookupUsersRequest.self, from: body)
        try checkLimit(request.users.count, "users")
        let emails = try request.users.map { info in
            guard let email = info.emailAddress else {
                throw ShareError(.badRequest, "users/lookup/email needs an emailAddress in every entry")
            }
            return email
        }
        let found = try await store.discoverUsers(emails.map(UserLookup.email), as: user)
        return try encode(
            UsersResponse(
                users: zip(emails, found).map { email, identity in
                    identity.userRecordName == nil ? WireUser(addressOnly: email) : WireUser(identity)
                }))
    }
}
