import Foundation
import PlanModel
import Planner
import ShareKit
import ShareStoreSQLite

/// One store under test: the embedded SQLite store, or the HTTP client of a `sharelane serve`, with the
/// SQLite file behind it (to list its users, which no `Store` call does without signing one in).
struct StoreSide: Sendable {
    let label: String
    let store: any Store
    let backing: SQLiteStore

    /// The owner's view of a record, or nil when it does not exist.
    func ownerRecord(_ name: String, zone: String, owner: UserRecordName) async throws -> Record? {
        let outcomes = try await store.lookupRecords([name], in: ZoneID(zoneName: zone), database: .private, as: owner)
        if case .saved(let record) = outcomes.first { return record }
        return nil
    }

    /// The owner's view of a share, or nil when it does not exist.
    func ownerShare(_ name: String, zone: String, owner: UserRecordName) async throws -> Share? {
        let outcomes = try await store.lookupRecords([name], in: ZoneID(zoneName: zone), database: .private, as: owner)
        if case .savedShare(let share) = outcomes.first { return share }
        return nil
    }

    /// The share a step names: the zone's, or the one rooted at `root`.
    func namedShare(zone: String, root: String?, owner: UserRecordName) async throws -> Share? {
        guard let root else { return try await ownerShare(zoneShareRecordName, zone: zone, owner: owner) }
        guard let record = try await ownerRecord(root, zone: zone, owner: owner), let name = record.shareRecordName
        else { return nil }
        let share = try await ownerShare(name, zone: zone, owner: owner)
        return share?.rootRecordName == root ? share : nil
    }

    /// The share covering a zone or a record (the zone's, or the nearest up the parent chain) and whether the
    /// record is that share's root.
    func coveringShare(zone: String, record: String?, owner: UserRecordName) async throws -> (Share?, isRoot: Bool) {
        if let zoneShare = try await ownerShare(zoneShareRecordName, zone: zone, owner: owner) {
            return (zoneShare, false)
        }
        var next = record
        var seen: Set<String> = []
        while let name = next, seen.insert(name).inserted {
            guard let current = try await ownerRecord(name, zone: zone, owner: owner) else { return (nil, false) }
            if let shareName = current.shareRecordName {
                return (try await ownerShare(shareName, zone: zone, owner: owner), name == record)
            }
            next = current.parent
        }
        return (nil, false)
    }

    /// Plans as JSON with what legitimately differs between stores replaced: the store's name, share URLs,
    /// assets' download URLs.
    func normalizedJSON(_ plan: Plan) -> String {
        Self.normalize(JSONPlanRenderer().render(plan), storeName: store.displayName)
    }

    static func normalize(_ text: String, storeName: String) -> String {
        var result = text
        // An asset read over Web Services carries its download URL before the checksum; the embedded store's
        // has none: the asset is its checksum and size.
        if let location = try? NSRegularExpression(pattern: #"https?://[^"\s#]+(?=#)"#) {
            result = location.stringByReplacingMatches(
                in: result, range: NSRange(result.startIndex..., in: result), withTemplate: "")
        }
        result = result.replacingOccurrences(of: storeName, with: "<store>")
        if let pattern = try? NSRegularExpression(pattern: #"https?://[^"\s]+"#) {
            result = pattern.stringByReplacingMatches(
                in: result, range: NSRange(result.startIndex..., in: result), withTemplate: "<url>")
        }
        return result
    }
}
