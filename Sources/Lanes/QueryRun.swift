import Recipe
import ShareKit

/// Runs a `QueryStep` as a user: the owner's zone in its private database, or the zone as a participant
/// sees it in the shared database (under the owner's record name), every page up to the limit. The lane's
/// `query:` step and `sharelane query` both run it.
public struct QueryRun: Sendable {
    public let store: any Store

    public init(store: any Store) { self.store = store }

    /// Where `actor` reads the zone, as the step says or by who they are.
    public static func place(_ step: QueryStep, actor: UserRecordName, owner: UserRecordName) -> (
        database: DatabaseScope, zoneID: ZoneID
    ) {
        let database = step.database ?? (actor == owner ? .private : .shared)
        switch database {
        case .public: return (.public, .defaultZone)
        case .private: return (.private, ZoneID(zoneName: step.zone))
        case .shared: return (.shared, ZoneID(zoneName: step.zone, ownerRecordName: owner))
        }
    }

    /// The records found, in the query's order.
    /// - Throws: the store's `ShareError` (an unindexed field: `BAD_REQUEST`, "… is not marked queryable").
    public func records(_ step: QueryStep, actor: UserRecordName, owner: UserRecordName) async throws -> [Record] {
        let (database, zoneID) = Self.place(step, actor: actor, owner: owner)
        var query = step.query
        let limit = step.query.resultsLimit ?? Int.max
        query.resultsLimit = min(limit, CloudKitLimits.recordsPerResponse)
        var records: [Record] = []
        while true {
            let page = try await store.queryRecords(query, in: zoneID, database: database, as: actor)
            records += page.records
            guard records.count < limit, let marker = page.continuationMarker else { break }
            query.continuationMarker = marker
        }
        return Array(records.prefix(limit))
    }

    /// What a query asks, as a lane line says it: `Fasting in Fasts where endDate ≥ … by endDate`.
    public static func summary(_ step: QueryStep) -> String {
        var text = "\(step.query.recordType) in \(step.zone)"
        if !step.query.filters.isEmpty {
            text +=
                " where "
                + step.query.filters.map { "\($0.fieldName) \($0.comparator.rawValue) \($0.value.displayString)" }
                .joined(separator: " and ")
        }
        if !step.query.sort.isEmpty {
            text +=
                " by " + step.query.sort.map { $0.fieldName + ($0.ascending ? "" : " desc") }.joined(separator: ", ")
        }
        return text
    }
}
