import Logging
import Recipe
import ShareKit

/// Compares a recipe's declared state with a live store and returns the plan that makes them match.
///
/// The planner reads the owner's private zones that the recipe declares and the public records it declares,
/// with a number of store calls that does not grow with the number of records beyond the store's paging
/// (one zone listing, each zone's changes, public lookups in batches of 200). It then applies the rules of
/// Docs/Plans.md: the recipe owns what it declares; undeclared records and fields are kept and counted unless pruned.
public struct Planner: Sendable {
    public let store: any Store
    public let logger: Logger

    /// A planner over `store`, logging to `logger`.
    public init(store: any Store, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Looks up the recipe's users, creating none, and plans the recipe against the store: a plan changes
    /// nothing in any store.
    /// - Throws: `PlannerError` when a user cannot be looked up or the store cannot be read.
    public func plan(_ recipe: Recipe, options: PlanOptions = PlanOptions()) async throws -> Plan {
        let users = try await UserDirectory.lookUp(recipe, store: store, logger: logger)
        return try await plan(recipe, users: users, options: options)
    }

    /// Plans the recipe against the store, with users already signed in.
    /// - Throws: `PlannerError` when a user has no account or the store cannot be read.
    public func plan(_ recipe: Recipe, users: UserDirectory, options: PlanOptions = PlanOptions()) async throws
        -> Plan
    {
        // An owner the store does not have yet owns nothing: everything the recipe declares is to create.
        let ownerRecordName = users.owner.recordName
        let zones =
            options.onlyZones.isEmpty
            ? recipe.zones : recipe.zones.filter { options.onlyZones.contains($0.name) }
        // The plan says what it leaves out; the command line prints it once, with the plan.
        let undeclared = options.onlyZones.filter { recipe.zone($0) == nil }.map {
            "only: zone \($0) is not declared in recipe \(recipe.name); nothing to plan for it."
        }
        let publicRecords = options.onlyZones.isEmpty ? recipe.publicRecords : []
        let reader = LiveStateReader(store: store, owner: ownerRecordName ?? "", logger: logger)
        var builder = PlanBuilder(
            recipe: recipe, users: users, live: LiveState(zones: [:], publicRecords: [:], storeCalls: 0),
            actsAsAnyUser: store.capabilities.actsAsAnyUser, prune: options.prune)
        builder.destroy = options.destroy
        // Each zone is planned as soon as it is read, while the next zones are read, and its records are let go
        // once planned: only their change tags stay, for the plan's basis. A `!share-url` naming another
        // zone's share needs that zone's live share, so such a recipe is read whole first.
        var zoneBases: [ZoneBasis] = []
        let pipelined = !Self.namesSharesOfOtherZones(recipe)
        var liveShares: [Share] = []
        // Incremental plans: a zone that did not change since the last plan, and planned to no changes then
        // with the same declaration, is planned from the cache file without being read. A zone whose records
        // name another zone's share depends on that zone too: it is always read.
        var incremental = try await IncrementalRead(
            cache: options.cache, reader: reader, owner: ownerRecordName, zones: zones,
            alwaysRead: Set(zones.filter { Self.namesSharesOfOtherZones($0) }.map(\.name)),
            digest: {
                PlanMemo.digest(
                    of: $0, recipe: recipe, users: users, prune: options.prune, destroy: options.destroy,
                    actsAsAnyUser: store.capabilities.actsAsAnyUser)
            })
        var calls = incremental.calls
        /// Plans a zone from the cache file: its notes and waiting lines, kept for the next plan.
        func planRemembered(_ index: Int) {
            guard let remembered = incremental.remembered[index] else { return }
            builder.notes += remembered.notes
            builder.waiting += remembered.waiting
            incremental.memo?.zones[zones[index].name] = remembered
        }
        /// Plans a zone from its live state, and keeps it for the next plan when it plans to no changes.
        func planRead(_ index: Int, _ liveZone: LiveZone?) throws {
            let zone = zones[index]
            let (changesBefore, notesBefore, waitingBefore) =
                (builder.changeCount, builder.notes.count, builder.waiting.count)
            try builder.add(zone)
            if builder.changeCount == changesBefore, let digest = incremental.digests[index] {
                incremental.memo?.zones[zone.name] = PlanMemo.Zone(
                    digest: digest, exists: liveZone != nil, tags: liveZone?.tags ?? [:],
                    shares: Array(liveZone?.shares.values ?? [:].values),
                    notes: Array(builder.notes[notesBefore...]), waiting: Array(builder.waiting[waitingBefore...]))
            }
        }
        var nextZone = 0
        /// Takes the remembered zones before `end` in the recipe's order: their bases and shares, and their
        /// plans (pipelined) or their shares for other zones' `!share-url` (read whole first).
        func takeRemembered(upTo end: Int) {
            while nextZone < end {
                if let remembered = incremental.remembered[nextZone] {
                    let name = zones[nextZone].name
                    liveShares += remembered.shares
                    zoneBases.append(ZoneBasis(zoneName: name, exists: remembered.exists, tags: remembered.tags))
                    if pipelined {
                        planRemembered(nextZone)
                    } else if remembered.exists {
                        builder.live.zones[name] = LiveZone(
                            zoneID: ZoneID(zoneName: name), records: [:], recordOrder: [],
                            shares: Dictionary(
                                remembered.shares.map { ($0.recordName, $0) }, uniquingKeysWith: { a, _ in a }))
                    }
                }
                nextZone += 1
            }
        }
        let toRead = ownerRecordName == nil ? [] : zones.indices.filter { incremental.remembered[$0] == nil }
        calls += try await reader.readZones(toRead.map { zones[$0].name }, listed: incremental.listed) {
            position, liveZone in
            let index = toRead[position]
            takeRemembered(upTo: index)
            let zone = zones[index]
            if let liveZone { liveShares += liveZone.shares.values }
            builder.live.zones[zone.name] = liveZone
            zoneBases.append(ZoneBasis(zoneName: zone.name, exists: liveZone != nil, tags: liveZone?.tags ?? [:]))
            if pipelined {
                try planRead(index, liveZone)
                builder.live.zones[zone.name] = nil
            }
            nextZone = index + 1
        }
        takeRemembered(upTo: ownerRecordName == nil ? 0 : zones.count)
        if !pipelined || ownerRecordName == nil {
            for (index, zone) in zones.enumerated() {
                if ownerRecordName == nil { zoneBases.append(ZoneBasis(zoneName: zone.name, exists: false)) }
                if incremental.remembered[index] != nil {
                    planRemembered(index)
                } else {
                    try planRead(index, builder.live.zones[zone.name])
                }
            }
        }
        let (livePublic, publicCalls) = try await reader.readPublic(
            ownerRecordName == nil ? [] : publicRecords.map(\.name))
        calls += publicCalls
        builder.live.publicRecords = livePublic
        try builder.addPublic(publicRecords)
        let basis = PlanBasis(
            zones: zoneBases,
            publicRecordNames: publicRecords.map(\.name),
            publicTags: livePublic.compactMapValues { $0.changeTag ?? "" }
        )
        var changes = builder.takeOrderedChanges()
        var notes = undeclared + builder.notes
        if !options.targets.isEmpty {
            let targets = try options.targets.map { (text) throws(PlannerError) in try PlanTarget(parsing: text) }
            let selection = TargetSelection.select(changes, targets: targets)
            changes = selection.kept
            notes += selection.unmatched.map { "--target '\($0)' names nothing this plan changes." }
            // Terraform's warning: a targeted plan is partial.
            notes.append(
                "Resource targeting is in effect: this plan holds only "
                    + targets.map { "'\($0)'" }.joined(separator: ", ")
                    + " and what \(targets.count == 1 ? "it needs" : "they need"), so it may not show every change "
                    + "the recipe makes. Use --target for "
                    + "exceptional cases, and plan without it to see the rest.")
        }
        let owner = users.owner
        let plannedOwner = PlannedUser(
            handle: owner.handle, email: owner.email, name: owner.name, recordName: ownerRecordName ?? "")
        let plannedUsers = users.entries.map {
            PlannedUser(handle: $0.handle, email: $0.email, name: $0.name, recordName: $0.recordName ?? "")
        }
        var plan = Plan(
            recipeName: recipe.name, storeName: store.displayName,
            owner: plannedOwner, users: plannedUsers, changes: changes, notes: notes, waiting: builder.waiting,
            basis: basis,
            access: PlanAccess.make(liveShares: liveShares, changes: changes, users: plannedUsers, owner: plannedOwner))
        plan.schema = try await planSchema(
            recipe, reader: ownerRecordName ?? users.entries.lazy.compactMap(\.recordName).first)
        if let cache = options.cache, let memo = incremental.memo { memo.save(to: cache.file) }
        logger.debug(
            "planned \(recipe.name): \(plan.summary.line) (\(calls) store calls, \(incremental.remembered.count) zone\(incremental.remembered.count == 1 ? "" : "s") from the cache)"
        )
        return plan
    }

    /// The schema changes the recipe needs, against the live schema of the recipe's environment; nil where
    /// the store keeps no schema. The schema is the container's, read as any user the store has (`reader`);
    /// when it has none of the recipe's users, a local store still answers, and a remote one, which answers
    /// signed-in users only, is taken to have no schema yet (its own checks still hold on apply).
    private func planSchema(_ recipe: Recipe, reader: UserRecordName?) async throws -> PlannedSchema? {
        guard store.capabilities.keepsSchema else { return nil }
        var live = Schema()
        do {
            live = try await store.schema(in: recipe.environment, as: reader ?? "")
        } catch let error as ShareError {
            if reader != nil {
                throw PlannerError.storeFailed(
                    operation: "reading the \(recipe.environment.rawValue) schema", subject: store.displayName, error)
            }
        }
        return try PlannedSchema.plan(recipe, live: live, storeName: store.displayName)
    }

    /// Whether a record of `zone` has a `!share-url` naming another zone's share.
    static func namesSharesOfOtherZones(_ zone: DeclaredZone) -> Bool {
        zone.records.contains { record in
            record.fields.values.contains { value in
                if case .shareURL(let other, _) = value, other != zone.name { return true }
                return false
            }
        }
    }

    /// Whether a record's `!share-url` names a share in another zone (or a public record's names any).
    static func namesSharesOfOtherZones(_ recipe: Recipe) -> Bool {
        for record in recipe.publicRecords {
            for value in record.fields.values {
                if case .shareURL = value { return true }
            }
        }
        for zone in recipe.zones {
            for record in zone.records {
                for value in record.fields.values {
                    if case .shareURL(let other, _) = value, other != zone.name { return true }
                }
            }
        }
        return false
    }
}
