import Foundation
import ShareKit

/// What a store holds for a set of users, read through the `Store` protocol, record by record: every user's
/// private and shared databases (zones, records with type, parent, share and fields, shares with their root,
/// public permission, title and participants) and the public records named. Change tags, times, URLs and short
/// GUIDs are left out: they differ between any two stores that hold the same.
public struct StoreContents: Equatable, Sendable, CustomStringConvertible {
    public var lines: [String]
    /// What was made twice: a participant listed twice in one share, a record or share read twice in a zone.
    public var duplicates: [String]

    public var description: String { lines.joined(separator: "\n") }

    /// Reads the contents as each user sees them.
    /// - Throws: what the store throws.
    public static func read(
        _ store: any Store, users: [(handle: String, recordName: UserRecordName)], publicRecords: [String] = []
    ) async throws -> StoreContents {
        var contents = StoreContents(lines: [], duplicates: [])
        for user in users {
            for database in [DatabaseScope.private, .shared] {
                contents.lines.append("\(user.handle) \(database.rawValue):")
                let zones = try await store.listZones(in: database, as: user.recordName)
                for zone in zones.sorted(by: { $0.zoneID < $1.zoneID }) {
                    contents.lines.append("  zone \(zone.zoneID.zoneName) owner=\(zone.zoneID.ownerRecordName)")
                    let whole = try await store.wholeZone(zone.zoneID, in: database, as: user.recordName)
                    contents.add(whole, zone: zone.zoneID.zoneName)
                }
            }
        }
        if let owner = users.first, !publicRecords.isEmpty {
            contents.lines.append("public:")
            let outcomes = try await store.lookupRecords(
                publicRecords, in: .defaultZone, database: .public, as: owner.recordName)
            for outcome in outcomes {
                switch outcome {
                case .saved(let record): contents.lines.append(Self.line(record))
                case .failed(let name, let error): contents.lines.append("    \(name): \(error.code.rawValue)")
                default: contents.lines.append("    \(outcome)")
                }
            }
        }
        return contents
    }

    private mutating func add(_ whole: WholeZone, zone: String) {
        var seen = Set<String>()
        for record in whole.records.sorted(by: { $0.recordName < $1.recordName }) {
            if !seen.insert(record.recordName).inserted { duplicates.append("record \(zone)/\(record.recordName)") }
            lines.append(Self.line(record))
        }
        for share in whole.shares.sorted(by: { $0.recordName < $1.recordName }) {
            if !seen.insert(share.recordName).inserted { duplicates.append("share \(zone)/\(share.recordName)") }
            var people = Set<String>()
            for participant in share.participants where !people.insert(participant.userRecordName).inserted {
                duplicates.append("participant \(zone)/\(share.rootRecordName ?? "")/\(participant.userRecordName)")
            }
            let participants = share.participants.map {
                "\($0.userRecordName):\($0.role.rawValue):\($0.permission.rawValue):\($0.acceptance.rawValue)"
            }.sorted()
            lines.append(
                "    share root=\(share.rootRecordName ?? "-") public=\(share.publicPermission.rawValue) "
                    + "title=\(share.title ?? "-") participants=[\(participants.joined(separator: ", "))]")
        }
        // Hierarchy shares are named by the store: the root names them in the lines above, not the name.
    }

    private static func line(_ record: Record) -> String {
        let fields = record.fields.sorted { $0.key < $1.key }.map {
            "\($0.key)=\($0.value.type.rawValue):\(text($0.value))"
        }
        return "    record \(record.recordName) type=\(record.recordType) parent=\(record.parent ?? "-") "
            + "shared=\(record.shareRecordName == nil ? "no" : "yes") " + fields.joined(separator: " ")
    }

    private static func text(_ value: FieldValue) -> String {
        switch value {
        case .reference(let r): "ref(\(r.recordName) \(r.action.rawValue))"
        case .list(_, let values): "[" + values.map(text).joined(separator: ", ") + "]"
        case .assetID(let a): AssetValue(text: a).map { $0.contentDigest ?? $0.checksum } ?? a
        default: value.displayString
        }
    }

    /// The lines only one side has, `-` for this one's and `+` for the other's.
    public func difference(from other: StoreContents) -> String {
        let mine = Set(lines)
        let theirs = Set(other.lines)
        return
            (lines.filter { !theirs.contains($0) }.map { "- \($0)" }
            + other.lines.filter { !mine.contains($0) }.map { "+ \($0)" }).joined(separator: "\n")
    }
}
