import Applier
import Logging
import PlanModel
import Recipe
import ShareKit

/// Writes the live state as a recipe: the owner's zones, records (children nested under their parents),
/// shares and participants, the public database's records, and the subscriptions of the users it names,
/// so that planning the recipe against the same store shows no changes.
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

    /// The live schema of the record types the exported records use (and of shares, when it shares), so
    /// that planning the export finds the indexes as they are, not as a save would make them. Nothing where
    /// the store keeps no schema: the export's schema is then inferred from its records.
    private func liveSchema(of recipe: Recipe, as owner: UserRecordName) async throws -> RecipeSchema {
        guard store.capabilities.keepsSchema else { return RecipeSchema() }
        let live: Schema
        do {
            live = try await store.schema(in: recipe.environment, as: owner)
        } catch let error as ShareError {
            throw PlannerError.storeFailed(
                operation: "reading the \(recipe.environment.rawValue) schema", subject: store.displayName, error)
        }
        var used = Set((recipe.zones.flatMap(\.records) + recipe.publicRecords).map(\.type))
        let shares = recipe.zones.contains { zone in
            zone.share != nil || zone.records.contains { $0.share != nil }
        }
        if shares { used.insert(shareRecordType) }
        let types = live.orderedTypes.filter { used.contains($0.name) }
        guard !types.isEmpty else { return RecipeSchema() }
        return RecipeSchema(schema: Schema(recordTypes: types), isDeclared: true)
    }

    /// The live state of `owner`'s private zones (all of them, or those named in `zones`) and of the public
    /// records `owner` created, as recipe YAML named `name`, for `container` and `environment` when given
    /// (the store's: `http:` and `cloudkit:` stores address one).
    /// - Throws: `PlannerError` when a named zone does not exist, a participant has no email address, or the
    ///   store cannot be read.
    /// - Parameter otherOwners: users whose zones the recipe declares too, each zone with its `owner:`
    ///   (their custom zones: the default zone is the owner's alone). A zone name two owners use is refused.
    /// - Parameter keptHandles: handles by email address (a recipe's `alice` for `alice@example.com`): a user
    ///   with one of these addresses keeps that handle, so the export fits the lanes written for the recipe;
    ///   any other user gets one made from the address.
    public func export(
        owner: User, otherOwners: [User] = [], zones: [String] = [], name: String = "exported",
        container: String? = nil, environment: String? = nil, assets: ExportAssets? = nil,
        keptHandles: [String: String] = [:]
    ) async throws -> String {
        let reader = LiveStateReader(store: store, owner: owner.recordName, logger: logger)
        var listedByOwner: [(owner: User, zones: [Zone])] = []
        for user in [owner] + otherOwners
        where !listedByOwner.contains(where: { $0.owner.recordName == user.recordName }) {
            do {
                let listed = try await store.listZones(in: .private, as: user.recordName)
                listedByOwner.append(
                    (user, user.recordName == owner.recordName ? listed : listed.filter { $0.zoneID != .defaultZone }))
            } catch let error as ShareError {
                throw PlannerError.storeFailed(operation: "listing zones", subject: store.displayName, error)
            }
        }
        // A recipe names each zone once: two owners' zones of one name cannot both be declared.
        var ownerOfZone: [String: User] = [:]
        for (user, listed) in listedByOwner {
            for zone in listed where zones.isEmpty || zones.contains(zone.zoneID.zoneName) {
                if let first = ownerOfZone[zone.zoneID.zoneName] {
                    throw PlannerError.storeFailed(
                        operation: "exporting", subject: "zone \(zone.zoneID.zoneName)",
                        ShareError(
                            .badRequest,
                            "both \(first.email ?? first.recordName) and \(user.email ?? user.recordName) own a zone of this name, and a recipe names each zone once; export one owner with --owner"
                        ))
                }
                ownerOfZone[zone.zoneID.zoneName] = user
            }
        }
        for zone in zones where ownerOfZone[zone] == nil { throw PlannerError.zoneNotFound(zone: zone) }
        var liveZones: [LiveZone] = []
        var zoneOwnerNames: [String: UserRecordName] = [:]
        for (user, listed) in listedByOwner {
            let ownerReader =
                user.recordName == owner.recordName
                ? reader : LiveStateReader(store: store, owner: user.recordName, logger: logger)
            for zone in listed.sorted(by: { $0.zoneID.zoneName < $1.zoneID.zoneName }) {
                if !zones.isEmpty && !zones.contains(zone.zoneID.zoneName) { continue }
                let (live, _, _) = try await ownerReader.readZone(zone.zoneID, database: .private)
                // An empty default zone is not worth declaring: every database has one.
                if zone.zoneID.zoneName == defaultZoneName && live.records.isEmpty { continue }
                liveZones.append(live)
                if user.recordName != owner.recordName { zoneOwnerNames[zone.zoneID.zoneName] = user.recordName }
            }
        }
        var publicZone: LiveZone? = nil
        var omitted: [String] = []
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
                // The recipe says what it lacks, in its own header.
                omitted.append("Public records are not exported: the store cannot list them (\(error)).")
            }
        }

        var users = ExportedUsers(kept: keptHandles)
        let ownerEmail = try await email(of: owner.recordName, known: owner.email, name: owner.name)
        let ownerHandle = users.handle(for: owner.recordName, email: ownerEmail, name: owner.name)
        for (user, _) in listedByOwner.dropFirst() {
            let email = try await email(of: user.recordName, known: user.email, name: user.name)
            _ = users.handle(for: user.recordName, email: email, name: user.name)
        }
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
                for participant in share.participants
                where participant.acceptance != .removed && participant.role != .owner {
                    let email = try await email(
                        of: participant.userRecordName, known: participant.email, name: participant.name)
                    _ = users.handle(for: participant.userRecordName, email: email, name: participant.name)
                }
            }
        }

        // Assets downloaded beside the recipe, written `!asset PATH`.
        var assetFiles: [String: String] = [:]
        if let assets {
            for zone in liveZones + (publicZone.map { [$0] } ?? []) {
                let records = zone.recordOrder.compactMap { zone.records[$0] }
                assetFiles.merge(
                    try await assets.write(records, zone: zone.zoneID.zoneName, store: store.displayName)
                ) { first, _ in first }
            }
        }
        let location = SourceLocation(file: name, line: 1, column: 1)
        var missingCount = 0
        func declared(_ zone: LiveZone, zoneName: String) -> [DeclaredRecord] {
            let records = Self.declaredRecords(
                zone, zoneName: zoneName, users: users, shareURLs: shareURLs, location: location)
            missingCount += records.filter(\.absent).count
            return records
        }
        let zones = liveZones.map { zone in
            DeclaredZone(
                name: zone.zoneID.zoneName, owner: zoneOwnerNames[zone.zoneID.zoneName].map { users.handle(of: $0) },
                share: zone.zoneShare.map { .share(Self.declaredShare($0, users: users, location: location)) },
                records: declared(zone, zoneName: zone.zoneID.zoneName), location: location)
        }
        // What others can find of the users (`phone:`, `discoverable:`): the owner's own settings, and for the
        // others only whether they are discoverable, as anyone can tell (their phone numbers are theirs).
        let ownerSettings = (try? await store.discoverability(as: owner.recordName)) ?? UserDiscoverability()
        let others = users.entries.filter { $0.recordName != owner.recordName }
        let discovered =
            others.isEmpty
            ? []
            : ((try? await store.discoverUsers(others.map { .recordName($0.recordName) }, as: owner.recordName)) ?? [])
        let discoverable = Set(discovered.compactMap(\.userRecordName))
        var recipe = Recipe(
            name: name, container: container ?? Recipe.defaultContainer,
            environment: environment.flatMap(CloudKitEnvironment.init(rawValue:)) ?? .development, file: name,
            users: users.entries.map { entry in
                let isOwner = entry.recordName == owner.recordName
                let found = isOwner ? ownerSettings.discoverable : discoverable.contains(entry.recordName)
                return DeclaredUser(
                    handle: entry.handle, email: entry.email, name: entry.name, location: location,
                    phone: isOwner ? ownerSettings.phone : nil, discoverable: found ? true : nil)
            }, owner: ownerHandle, zones: zones,
            publicRecords: publicZone.map { declared($0, zoneName: defaultZoneName) } ?? [])
        recipe.schema = try await liveSchema(of: recipe, as: owner.recordName)
        let (subscriptions, subscriptionNotes) = await exportedSubscriptions(
            users: users, owner: owner.recordName, zones: Set(zones.map(\.name)))
        recipe.subscriptions = subscriptions
        omitted += subscriptionNotes
        var header = ["Exported by `sharelane export` from \(store.displayName)."] + omitted
        if missingCount > 0 {
            header.append(
                "Records of type Missing are named by a parent or a reference but no longer exist: declared absent.")
        }
        return RecipeWriter(
            header: header, writesContainer: container != nil || environment != nil, assetFiles: assetFiles
        ).yaml(recipe)
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

    private static func declaredShare(_ share: Share, users: ExportedUsers, location: SourceLocation) -> DeclaredShare {
        // Public users joined through the share's URL; a recipe cannot name them, and planning keeps them.
        let participants = share.participants.filter {
            $0.acceptance != .removed && $0.role != .owner && $0.role != .publicUser
        }
        return DeclaredShare(
            title: share.title, publicPermission: share.publicPermission,
            participants: participants.map {
                DeclaredParticipant(
                    handle: users.handle(of: $0.userRecordName), permission: $0.permission, role: $0.role,
                    accepted: $0.acceptance == .accepted, location: location)
            }, location: location)
    }

    /// A zone's records in name order, then the records that a parent or a reference names but that no
    /// longer exist (deleted behind the recipe's back), declared absent with the type `Missing`, so that the
    /// recipe names them as it must and plans to nothing.
    private static func declaredRecords(
        _ zone: LiveZone, zoneName: String, users: ExportedUsers, shareURLs: [String: String],
        location: SourceLocation
    ) -> [DeclaredRecord] {
        var result: [DeclaredRecord] = []
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
            if let parent = record.parent, parent != name, zone.records[parent] == nil { missing.insert(parent) }
            result.append(
                DeclaredRecord(
                    name: name, type: record.recordType,
                    fields: record.fields.mapValues { value in
                        if case .string(let s) = value, let path = shareURLs[s] {
                            let parts = path.split(separator: "/", maxSplits: 1).map(String.init)
                            return .shareURL(zone: parts[0], record: parts.count > 1 ? parts[1] : nil)
                        }
                        return .value(value)
                    },
                    parent: record.parent == name ? nil : record.parent,
                    share: zone.share(rootedAt: name).map {
                        .share(declaredShare($0, users: users, location: location))
                    },
                    location: location))
        }
        for name in missing.sorted() {
            result.append(DeclaredRecord(name: name, type: "Missing", absent: true, location: location))
        }
        return result
    }
}

/// The users an export names: the handles a recipe gave them, else handles made from email addresses, unique.
public struct ExportedUsers {
    struct Entry {
        var handle: String
        var recordName: UserRecordName
        var email: String
        var name: String?
    }

    private(set) var entries: [Entry] = []
    /// Handles to keep, by lowercased email address.
    private let kept: [String: String]
    /// The kept handles, which no other user is given.
    private let reserved: Set<String>

    init(kept: [String: String] = [:]) {
        self.kept = Dictionary(kept.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        reserved = Set(self.kept.values)
    }

    mutating func handle(for recordName: UserRecordName, email: String, name: String?) -> String {
        if let existing = entries.first(where: { $0.recordName == recordName }) { return existing.handle }
        if let handle = kept[email.lowercased()], !entries.contains(where: { $0.handle == handle }) {
            entries.append(Entry(handle: handle, recordName: recordName, email: email, name: name))
            return handle
        }
        let base = Self.baseHandle(email: email)
        var handle = base
        var suffix = 2
        while entries.contains(where: { $0.handle == handle }) || reserved.contains(handle) {
            handle = "\(base)-\(suffix)"
            suffix += 1
        }
        entries.append(Entry(handle: handle, recordName: recordName, email: email, name: name))
        return handle
    }

    /// The handle an export writes for an email address (`mia` for `mia@example.com`), before a suffix
    /// that tells two users of the same name apart (`mia-2`).
    public static func baseHandle(email: String) -> String {
        let local = email.split(separator: "@").first.map(String.init) ?? email
        let base = String(local.lowercased().map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" ? $0 : "-" })
        return base.isEmpty ? "user" : base
    }

    func handle(of recordName: UserRecordName) -> String {
        entries.first { $0.recordName == recordName }?.handle ?? recordName
    }
}
