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
    /// Reads `zoneID` whole as `user`: every page of its change feed, folded by `ZoneFeedFold`.
    /// - Parameters:
    ///   - zoneID: the zone to read.
    ///   - database: the database the caller reaches the zone in.
    ///   - user: the caller.
    ///   - pageSize: the `resultsLimit` of each page; nil lets the store choose.
    /// - Throws: the store's `ShareError`.
    public func wholeZone(
        _ zoneID: ZoneID, in database: DatabaseScope, as user: UserRecordName, pageSize: Int? = nil
    ) async throws -> WholeZone {
        var fold = ZoneFeedFold()
        let ending = try await followZoneChanges(zoneID, in: database, since: nil, pageSize: pageSize, as: user) {
            page in
            fold.add(page)
            return true
        }
        return WholeZone(
            records: fold.orderedRecords, shares: fold.orderedShares, calls: ending.calls, token: ending.token)
    }
}
