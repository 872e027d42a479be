/// A page of a change feed: a zone's (`ZoneChanges`) or a database's (`DatabaseChanges`).
public protocol ChangeFeedPage: Sendable {
    /// The token to ask the next page with.
    var token: ChangeToken { get }
    /// Whether more pages follow this one.
    var moreComing: Bool { get }
}

extension ZoneChanges: ChangeFeedPage {}
extension DatabaseChanges: ChangeFeedPage {}

/// How a change feed is followed, in one place for every reader of one (`wholeZone`, the zone tags a feed
/// gives, the planner's incremental reads and its database changes): page after page from a token, until a
/// page says no more comes, or hands back the token it was asked with (a store that did so would otherwise
/// be asked forever).
public enum ChangeFeedPaging {
    /// How a read of a feed ended.
    public struct Ending: Sendable, Hashable {
        /// The token of the last page read: what changed after the read is what the feed gives from it.
        public var token: ChangeToken
        /// The pages read, one store call each.
        public var calls: Int
        /// Whether `receive` stopped the read before the feed's end.
        public var stoppedEarly: Bool
    }

    /// Reads pages with `read`, from `since`, handing each to `receive`, which returns false to stop there.
    /// - Throws: what `read` or `receive` throws.
    public static func follow<Page: ChangeFeedPage>(
        from since: ChangeToken?, read: (ChangeToken?) async throws -> Page, receive: (Page) throws -> Bool
    ) async throws -> Ending {
        var token = since
        var calls = 0
        while true {
            let page = try await read(token)
            calls += 1
            guard try receive(page) else { return Ending(token: page.token, calls: calls, stoppedEarly: true) }
            if !page.moreComing || page.token == token {
                return Ending(token: page.token, calls: calls, stoppedEarly: false)
            }
            token = page.token
        }
    }
}

extension Store {
    /// Follows `zoneID`'s change feed as `user` from `since` (`ChangeFeedPaging.follow`).
    /// - Parameters:
    ///   - zoneID: the zone whose feed is read.
    ///   - database: the database the caller reaches the zone in.
    ///   - since: the token to read from; nil reads from the start.
    ///   - pageSize: each page's `resultsLimit`; nil lets the store choose.
    ///   - user: the caller.
    ///   - receive: takes each page; returns false to stop there.
    /// - Throws: the store's `ShareError`, or what `receive` throws.
    public func followZoneChanges(
        _ zoneID: ZoneID, in database: DatabaseScope, since: ChangeToken?, pageSize: Int? = nil,
        as user: UserRecordName, receive: (ZoneChanges) throws -> Bool
    ) async throws -> ChangeFeedPaging.Ending {
        try await ChangeFeedPaging.follow(
            from: since,
            read: { token in
                try await zoneChanges(zoneID, in: database, since: token, resultsLimit: pageSize, as: user)
            }, receive: receive)
    }

    /// Follows the database's change feed as `user` from `since` (`ChangeFeedPaging.follow`).
    public func followDatabaseChanges(
        in database: DatabaseScope, since: ChangeToken?, as user: UserRecordName,
        receive: (DatabaseChanges) throws -> Bool
    ) async throws -> ChangeFeedPaging.Ending {
        try await ChangeFeedPaging.follow(
            from: since, read: { token in try await databaseChanges(in: database, since: token, as: user) },
            receive: receive)
    }
}
