/// A zone's records and shares as a user sees them, read from the zone's change feed from its beginning with
/// every page followed: what the planner, the reports, the console, lane expectations and `show` read.
public struct WholeZone: Sendable, Hashable {
    /// The records, share records left out, in the order the feed first gave them.
    public var records: [Record]
    /// The shares, in the order the feed first gave them.
    public var shares: [Share]
    /// The store calls the read made (one a page).
    public var calls: Int
    /// The token of the last page: the zone's changes since it are what changed after this read.
    public var token: ChangeToken?

    public init(records: [Record] = [], shares: [Share] = [], calls: Int = 0, token: ChangeToken? = nil) {
        self.records = records
        self.shares = shares
        self.calls = calls
        self.token = token
    }
}

extension Store {
    /// Reads `zoneID` whole as `user`: every page of its change feed, later pages replacing what earlier
    /// ones gave and deletions removing it.
    /// - Parameters:
    ///   - zoneID: the zone to read.
    ///   - database: the database the caller reaches the zone in.
    ///   - user: the caller.
    ///   - pageSize: the `resultsLimit` of each page; nil lets the store choose.
    /// - Throws: the store's `ShareError`.
    public func wholeZone(
        _ zoneID: ZoneID, in database: DatabaseScope, as user: UserRecordName, pageSize: Int? = nil
    ) async throws -> WholeZone {
        var records: [String: Record] = [:]
        var recordOrder: [String] = []
        var shares: [String: Share] = [:]
        var shareOrder: [String] = []
        var seenRecords = Set<String>()
        var seenShares = Set<String>()
        let ending = try await followZoneChanges(zoneID, in: database, since: nil, pageSize: pageSize, as: user) {
            page in
            for record in page.changedRecords where record.recordType != shareRecordType {
                records[record.recordName] = record
                if seenRecords.insert(record.recordName).inserted { recordOrder.append(record.recordName) }
            }
            for share in page.changedShares {
                shares[share.recordName] = share
                if seenShares.insert(share.recordName).inserted { shareOrder.append(share.recordName) }
            }
            for name in page.deletedRecordNames {
                records[name] = nil
                shares[name] = nil
            }
            return true
        }
        return WholeZone(
            records: recordOrder.compactMap { records[$0] }, shares: shareOrder.compactMap { shares[$0] },
            calls: ending.calls, token: ending.token)
    }
}
