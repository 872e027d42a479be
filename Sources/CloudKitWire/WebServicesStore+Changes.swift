import Foundation
import ShareKit

// Change feeds over Web Services: `changes/database`, and `changes/zone` read with the other zones' feeds
// asked at the same moment (`ZoneFeedBatches`).
extension WebServicesStore {
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
}

// MARK: - ReadsZoneFeedsTogether

extension WebServicesStore: ReadsZoneFeedsTogether {
    package var zoneFeedsPerRequest: Int { Self.zoneFeedsPerRequest }
}
