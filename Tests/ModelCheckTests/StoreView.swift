import Foundation
import ShareKit

/// What every user sees, as text: each database's zones, their records with fields, their shares with
/// participants. Change tags, times, share URLs and short GUIDs are left out: they legitimately differ
/// between stores and between runs.
struct StoreView: Equatable, Sendable, CustomStringConvertible {
    var lines: [String]

    var description: String { lines.joined(separator: "\n") }

    /// Reads the view of every user in `users` (handle → user record name) through the `Store` protocol.
    ///
    /// Without `full`, only the first user's (the owner's) private database is read, with everyone's shared
    /// database and the public one: no action writes a participant's private database, and reading them after
    /// every action cost a third of the run; the last view of a case is full.
    static func read(_ store: any Store, users: [(handle: String, recordName: UserRecordName)], full: Bool = true)
        async -> StoreView
    {
        // Users are read at once: over `http:` each read is a few requests, and the views of a run are most of
        // its time (200 cases: about 14 of 23 s one user after another).
        let perUser = await withTaskGroup(of: (Int, [String]).self) { group in
            for (index, user) in users.enumerated() {
                let databases: [DatabaseScope] = full || index == 0 ? [.private, .shared] : [.shared]
                group.addTask {
                    (index, await userLines(store, handle: user.handle, user: user.recordName, databases: databases))
                }
            }
            var result = [[String]](repeating: [], count: users.count)
            for await (index, lines) in group { result[index] = lines }
            return result
        }
        var lines = perUser.flatMap { $0 }
        if let owner = users.first {
            lines.append("public:")
            lines += await zoneLines(store, .defaultZone, database: .public, as: owner.recordName)
        }
        return StoreView(lines: lines)
    }

    private static func userLines(
        _ store: any Store, handle: String, user: UserRecordName, databases: [DatabaseScope]
    ) async -> [String] {
        var lines: [String] = []
        for database in databases {
            lines.append("\(handle) \(database.rawValue):")
            let zones: [Zone]
            do {
                zones = try await store.listZones(in: database, as: user)
            } catch {
                lines.append("  listZones refused: \(code(error))")
                continue
            }
            for zone in zones.sorted(by: { $0.zoneID < $1.zoneID }) {
                lines.append("  zone \(zone.zoneID.zoneName) owner=\(zone.zoneID.ownerRecordName)")
                lines += await zoneLines(store, zone.zoneID, database: database, as: user)
            }
        }
        return lines
    }

    private static func zoneLines(
        _ store: any Store, _ zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName
    )
        async -> [String]
    {
        var records: [String: Record] = [:]
        var shares: [String: Share] = [:]
        var token: ChangeToken? = nil
        do {
            while true {
                let page = try await store.zoneChanges(zoneID, in: database, since: token, resultsLimit: nil, as: user)
                for record in page.changedRecords { records[record.recordName] = record }
                for share in page.changedShares { shares[share.recordName] = share }
                for name in page.deletedRecordNames {
                    records[name] = nil
                    shares[name] = nil
                }
                token = page.token
                if !page.moreComing { break }
            }
        } catch {
            return ["    changes refused: \(code(error))"]
        }
        var lines: [String] = []
        for (name, record) in records.sorted(by: { $0.key < $1.key }) {
            let fields = record.fields.sorted { $0.key < $1.key }.map {
                "\($0.key)=\($0.value.type.rawValue):\(canonical($0.value))"
            }
            lines.append(
                "    record \(name) type=\(record.recordType) parent=\(record.parent ?? "-") share=\(record.shareRecordName ?? "-") "
                    + fields.joined(separator: " "))
        }
        for (name, share) in shares.sorted(by: { $0.key < $1.key }) {
            let participants = share.participants.map {
                "\($0.userRecordName):\($0.role.rawValue):\($0.permission.rawValue):\($0.acceptance.rawValue)"
            }.sorted()
            lines.append(
                "    share \(name) root=\(share.rootRecordName ?? "-") public=\(share.publicPermission.rawValue) "
                    + "title=\(share.title ?? "-") participants=[\(participants.joined(separator: ", "))]")
        }
        return lines
    }

    private static func canonical(_ value: FieldValue) -> String {
        switch value {
        case .reference(let r): "ref(\(r.zoneID?.description ?? "-")/\(r.recordName) \(r.action.rawValue))"
        case .list(_, let values): "[" + values.map(canonical).joined(separator: ", ") + "]"
        default: value.displayString
        }
    }

    static func code(_ error: any Error) -> String {
        (error as? ShareError)?.code.rawValue ?? "\(error)"
    }
}
