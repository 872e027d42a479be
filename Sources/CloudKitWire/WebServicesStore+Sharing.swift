import Foundation
import ShareKit

// Sharing over Web Services: resolving, accepting and leaving shares, the requests `WebServicesStore` sends
// for the `Store` calls about shares beyond saving them.
extension WebServicesStore {
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
            let guids = chunk.map(ShareURL.shortGUID(from:))
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
            operations: [.init(operationType: WireSpelling.operationType(.forceDelete), record: record)],
            zoneID: WireZoneID(zoneID), atomic: false)
        let (response, resent): (RecordsResponse, Bool) = try await sendNoting(
            .recordsModify, database: .shared, body: request, as: user)
        guard let error = response.records.first?.error(in: zoneID) else { return }
        // Sent again after a lost answer: the earlier attempt left, and the share is gone from the shared
        // database.
        if resent, error.code == .notFound || error.code == .zoneNotFound { return }
        throw error
    }

    private func shareRequest(_ operation: WireOperation, url: String, as user: UserRecordName) async throws
        -> ShareMetadata
    {
        let guid = ShareURL.shortGUID(from: url)
        let response: ShareResultsResponse = try await send(
            operation, database: .public, body: ShortGUIDsRequest([guid]), as: user)
        guard let first = response.results.first else {
            throw ShareError(.internalError, "\(operation) answered no result", subject: "share \(guid)")
        }
        return try first.metadata()
    }
}
