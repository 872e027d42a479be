import ShareKit

/// Renders what a user sees in a store as indented lines: zones, shares, participants, records by parent.
struct StoreTreeRenderer {
    let store: any Store
    let zoneFilter: String?

    func isPublicEmpty() async throws -> Bool {
        let changes = try await store.zoneChanges(
            ZoneID(zoneName: defaultZoneName), in: .public, since: nil, resultsLimit: 1, as: "")
        return changes.changedRecords.isEmpty
    }

    /// The database as `user` sees it; nothing for the public database when only another zone is asked for
    /// (the public database has only its default zone).
    func render(_ scope: DatabaseScope, as user: UserRecordName) async throws -> [String] {
        if scope == .public, let zoneFilter, zoneFilter != defaultZoneName { return [] }
        var lines = ["\(scope.rawValue) database"]
        let zones = try await store.listZones(in: scope, as: user).filter {
            zoneFilter == nil || $0.zoneID.zoneName == zoneFilter
        }
        var shown = 0
        for zone in zones {
            let zoneLines = try await render(zone, in: scope, as: user)
            if zoneLines.count <= 1, zone.zoneID.zoneName == defaultZoneName, zoneFilter == nil { continue }
            lines += zoneLines.map { "  " + $0 }
            shown += 1
        }
        if shown == 0 {
            switch scope {
            case .private: lines.append("  (no zones or records)")
            case .shared: lines.append("  (nothing shared with this user and accepted)")
            case .public: lines.append("  (no records)")
            }
        }
        return lines
    }

    private func render(_ zone: Zone, in scope: DatabaseScope, as user: UserRecordName) async throws -> [String] {
        let whole = try await store.wholeZone(zone.zoneID, in: scope, as: user, pageSize: 500)
        let records = whole.records
        let shares = whole.shares
        var title = "zone \(zone.zoneID.zoneName)"
        if scope == .shared {
            title += " (owner \(await ownerName(zone.zoneID.ownerRecordName, shares: shares)))"
        }
        if records.isEmpty && shares.isEmpty { title += " (empty)" }
        var lines = [title]
        for share in shares.sorted(by: { $0.recordName < $1.recordName }) where share.isZoneWide {
            lines += try await renderShare(share).map { "  " + $0 }
        }
        let names = Set(records.map(\.recordName))
        let sharesByRoot = Dictionary(
            shares.compactMap { s in s.rootRecordName.map { ($0, s) } }, uniquingKeysWith: { a, _ in a })
        var children: [String: [Record]] = [:]
        var roots: [Record] = []
        for record in records {
            if let parent = record.parent, names.contains(parent), parent != record.recordName {
                children[parent, default: []].append(record)
            } else {
                roots.append(record)
            }
        }
        var ownerLines: [String: [String]] = [:]
        for share in sharesByRoot.values { ownerLines[share.recordName] = try await renderShare(share) }
        var visited = Set<String>()
        func renderRecord(_ record: Record, depth: Int) {
            guard visited.insert(record.recordName).inserted else { return }
            let pad = String(repeating: "  ", count: depth)
            var line = "\(pad)record \(record.recordName) (\(record.recordType))"
            if let parent = record.parent, !names.contains(parent) { line += " parent \(parent) (not visible)" }
            lines.append(line)
            if let share = sharesByRoot[record.recordName] {
                lines += (ownerLines[share.recordName] ?? []).map { pad + "  " + $0 }
            }
            for key in record.fields.keys.sorted() {
                if let value = record.fields[key] { lines.append("\(pad)  \(key): \(value.displayString)") }
            }
            for child in (children[record.recordName] ?? []).sorted(by: { $0.recordName < $1.recordName }) {
                renderRecord(child, depth: depth + 1)
            }
        }
        for record in roots.sorted(by: { $0.recordName < $1.recordName }) { renderRecord(record, depth: 1) }
        return lines
    }

    /// The owner as a person reads it: the email address where the store or the share's own participant list
    /// tells it (a store that acts only as the signed-in user, Apple's, tells no other user's).
    private func ownerName(_ recordName: UserRecordName, shares: [Share] = []) async -> String {
        let listed = shares.lazy.flatMap(\.participants).first { $0.userRecordName == recordName && $0.email != nil }
        var email = listed?.email
        if email == nil { email = (try? await store.currentUser(as: recordName))?.email }
        guard let email else { return recordName }
        return "\(email) (\(recordName))"
    }

    private func renderShare(_ share: Share) async throws -> [String] {
        var head = share.isZoneWide ? "share (whole zone)" : "share \(share.recordName)"
        if let title = share.title { head += " \"\(title)\"" }
        head += ", public \(share.publicPermission.recipeName)"
        if let url = share.url { head += ", \(url)" }
        var lines = [head, "  owner \(await ownerName(share.ownerRecordName, shares: [share]))"]
        for p in share.participants {
            lines.append(
                "  \(p.email ?? p.userRecordName): \(p.permission.recipeName), \(p.role.recipeName), \(p.acceptance.recipeName)"
            )
        }
        if share.participants.isEmpty { lines.append("  (no participants)") }
        return lines
    }
}
