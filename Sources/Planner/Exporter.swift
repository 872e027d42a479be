import Logging
import ShareKit

/// Writes the live state as a recipe: the owner's zones, records (children nested under their parents),
/// shares and participants, and the public database's records, so that planning the recipe against the same
/// store shows no changes.
///
/// What a recipe cannot say is left out: removed participants and public users (who join through the URL)
/// are not listed, and generated records come back one by one. A record that a parent or a reference names but
/// that no longer exists is declared `absent: true`, so the recipe is valid and plans to nothing.
public struct Exporter: Sendable {
    public let store: any Store
    public let logger: Logger

    /// An exporter over `store`, logging to `logger`.
    public init(store: any Store, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// The live state of `owner`'s private zones (all of them, or those named in `zones`) and of the public
    /// records `owner` created, as recipe YAML named `name`, for `container` and `environment` when given
    /// (the store's: `http:` and `cloudkit:` stores address one).
    /// - Throws: `PlannerError` when a named zone does not exist, a participant has no email address, or the
    ///   store cannot be read.
    public func export(
        owner: User, zones: [String] = [], name: String = "exported", container: String? = nil,
        environment: String? = nil
    ) async throws -> String {
        let reader = LiveStateReader(store: store, owner: owner.recordName, logger: logger)
        let listed: [Zone]
        do {
            listed = try await store.listZones(in: .private, as: owner.recordName)
        } catch let error as ShareError {
            throw PlannerError.storeFailed(operation: "listing zones", subject: store.displayName, error)
        }
        let listedNames = listed.map(\.zoneID.zoneName)
        for zone in zones where !listedNames.contains(zone) { throw PlannerError.zoneNotFound(zone: zone) }
        var liveZones: [LiveZone] = []
        for zone in listed.sorted(by: { $0.zoneID.zoneName < $1.zoneID.zoneName }) {
            if !zones.isEmpty && !zones.contains(zone.zoneID.zoneName) { continue }
            let (live, _) = try await reader.readZone(zone.zoneID, database: .private)
            // An empty default zone is not worth declaring: every database has one.
            if zone.zoneID.zoneName == defaultZoneName && live.records.isEmpty { continue }
            liveZones.append(live)
        }
        var publicZone: LiveZone? = nil
        if zones.isEmpty {
            do {
                // The public database is everyone's: the owner's recipe declares the records the owner made.
                var zone = try await reader.readZone(.defaultZone, database: .public).0
                for (name, record) in zone.records where record.created?.userRecordName != owner.recordName {
                    zone.records[name] = nil
                }
                zone.recordOrder.removeAll { zone.records[$0] == nil }
                publicZone = zone
            } catch {
                logger.warning("public records not exported: the store cannot list them (\(error))")
            }
        }

        var users = ExportedUsers()
        let ownerEmail = try await email(of: owner.recordName, known: owner.email, name: owner.name)
        let ownerHandle = users.handle(for: owner.recordName, email: ownerEmail, name: owner.name)
        var shareURLs: [String: String] = [:]
        for zone in liveZones {
            // Shares in the order of their record names (a dictionary's order changes from run to run), so
            // that users get their handles, and the export its text, the same way every time.
            let shares = zone.shares.values.sorted { $0.recordName < $1.recordName }
            for share in shares {
                guard let url = share.url else { continue }
                shareURLs[url] = share.rootRecordName.map { "\(zone.zoneID.zoneName)/\($0)" } ?? zone.zoneID.zoneName
            }
            for share in shares {
                for participant in share.participants where participant.acceptance != .removed && participant.role != .owner {
                    let email = try await email(of: participant.userRecordName, known: participant.email, name: participant.name)
                    _ = users.handle(for: participant.userRecordName, email: email, name: participant.name)
                }
            }
        }

        var writer = RecipeWriter()
        writer.comment("Exported by `sharelane export` from \(store.displayName).")
        writer.line(0, "sharelane: 1")
        writer.line(0, "name: \(RecipeWriter.string(name))")
        if let container { writer.line(0, "container: \(RecipeWriter.string(container))") }
        if let environment { writer.line(0, "environment: \(RecipeWriter.string(environment))") }
        writer.blank()
        writer.line(0, "users:")
        for user in users.entries {
            var parts = ["email: \(RecipeWriter.string(user.email))"]
            if let name = user.name { parts.append("name: \(RecipeWriter.string(name))") }
            writer.line(1, "\(RecipeWriter.key(user.handle)): {\(parts.joined(separator: ", "))}")
        }
        writer.line(0, "owner: \(RecipeWriter.key(ownerHandle))")
        if !liveZones.isEmpty {
            writer.blank()
            writer.line(0, "zones:")
            for zone in liveZones {
                let zoneName = zone.zoneID.zoneName
                writer.line(1, "\(RecipeWriter.key(zoneName)):")
                if let share = zone.zoneShare {
                    writeShare(share, indent: 2, users: users, into: &writer)
                }
                writeRecords(zone, zoneName: zoneName, indent: 2, users: users, shareURLs: shareURLs, into: &writer)
            }
        }
        if let publicZone, !publicZone.records.isEmpty {
            writer.blank()
            writer.line(0, "public:")
            writeRecords(publicZone, zoneName: defaultZoneName, indent: 1, users: users, shareURLs: shareURLs, into: &writer)
        }
        return writer.text
    }

    private func email(of user: UserRecordName, known: String?, name: String?) async throws -> String {
        if let known, !known.isEmpty { return known }
        if store.capabilities.actsAsAnyUser, let email = try? await store.currentUser(as: user).email, !email.isEmpty {
            return email
        }
        throw PlannerError.storeFailed(
            operation: "exporting", subject: "user \(user)",
            ShareError(.notFound, "the store has no email address for this user, and a recipe names users by email"))
    }

    private func writeShare(_ share: Share, indent: Int, users: ExportedUsers, into writer: inout RecipeWriter) {
        writer.line(indent, "share:")
        if let title = share.title { writer.line(indent + 1, "title: \(RecipeWriter.string(title))") }
        writer.line(indent + 1, "public_permission: \(share.publicPermission.recipeName)")
        // Public users joined through the share's URL; a recipe cannot name them, and planning keeps them.
        let participants = share.participants.filter {
            $0.acceptance != .removed && $0.role != .owner && $0.role != .publicUser
        }
        guard !participants.isEmpty else { return }
        writer.line(indent + 1, "participants:")
        for participant in participants {
            let handle = RecipeWriter.key(users.handle(of: participant.userRecordName))
            var parts = ["permission: \(participant.permission.recipeName)"]
            if participant.role != .privateUser { parts.append("role: \(participant.role.recipeName)") }
            parts.append("accepted: \(participant.acceptance == .accepted)")
            writer.line(indent + 2, "\(handle): {\(parts.joined(separator: ", "))}")
        }
    }

    private func writeRecords(
        _ zone: LiveZone, zoneName: String, indent: Int, users: ExportedUsers, shareURLs: [String: String],
        into writer: inout RecipeWriter
    ) {
        guard !zone.records.isEmpty else { return }
        var children: [String: [String]] = [:]
        var roots: [String] = []
        // Records that a parent or a reference names but that no longer exist (deleted behind the recipe's
        // back): declared `absent: true`, so that the recipe names them as it must, and plans to nothing.
        var missing = Set<String>()
        for name in zone.records.keys.sorted() {
            guard let record = zone.records[name] else { continue }
            for value in record.fields.values {
                for action in ReferenceAction.allCases {
                    for target in value.referencedRecordNames(action: action, inZone: zoneName)
                    where zone.records[target] == nil {
                        missing.insert(target)
                    }
                }
            }
            if let parent = record.parent, zone.records[parent] != nil, parent != name {
                children[parent, default: []].append(name)
            } else {
                if let parent = record.parent, parent != name { missing.insert(parent) }
                roots.append(name)
            }
        }
        writer.line(indent, "records:")
        var visited: Set<String> = []
        func write(_ name: String, _ indent: Int, _ writer: inout RecipeWriter) {
            guard let record = zone.records[name], visited.insert(name).inserted else { return }
            writer.line(indent, "\(RecipeWriter.key(name)):")
            writer.line(indent + 1, "type: \(RecipeWriter.string(record.recordType))")
            if let parent = record.parent, missing.contains(parent) {
                writer.line(indent + 1, "parent: \(RecipeWriter.key(parent))")
            }
            if !record.fields.isEmpty {
                writer.line(indent + 1, "fields:")
                for field in record.fields.keys.sorted() {
                    guard let value = record.fields[field] else { continue }
                    let yaml = RecipeWriter.value(value, zone: zoneName, shareURLs: shareURLs)
                    writer.line(indent + 2, "\(RecipeWriter.key(field)): \(yaml)")
                }
            }
            if let share = zone.share(rootedAt: name) {
                writeShare(share, indent: indent + 1, users: users, into: &writer)
            }
            if let kids = children[name], !kids.isEmpty {
                writer.line(indent + 1, "children:")
                for kid in kids { write(kid, indent + 2, &writer) }
            }
        }
        for root in roots { write(root, indent + 1, &writer) }
        for name in missing.sorted() {
            writer.line(indent + 1, "\(RecipeWriter.key(name)): {type: Missing, absent: true}  # named by a record, no longer there")
        }
    }
}

/// The users an export names: handles made from email addresses, unique.
struct ExportedUsers {
    struct Entry {
        var handle: String
        var recordName: UserRecordName
        var email: String
        var name: String?
    }

    private(set) var entries: [Entry] = []

    mutating func handle(for recordName: UserRecordName, email: String, name: String?) -> String {
        if let existing = entries.first(where: { $0.recordName == recordName }) { return existing.handle }
        let local = email.split(separator: "@").first.map(String.init) ?? email
        var base = String(local.lowercased().map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" ? $0 : "-" })
        if base.isEmpty { base = "user" }
        var handle = base
        var suffix = 2
        while entries.contains(where: { $0.handle == handle }) {
            handle = "\(base)-\(suffix)"
            suffix += 1
        }
        entries.append(Entry(handle: handle, recordName: recordName, email: email, name: name))
        return handle
    }

    func handle(of recordName: UserRecordName) -> String {
        entries.first { $0.recordName == recordName }?.handle ?? recordName
    }
}
