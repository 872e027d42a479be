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
        var calls = try await reader.readZones(ownerRecordName == nil ? [] : zones.map(\.name)) { index, liveZone in
            let zone = zones[index]
            if let liveZone { liveShares += liveZone.shares.values }
            builder.live.zones[zone.name] = liveZone
            zoneBases.append(ZoneBasis(zoneName: zone.name, exists: liveZone != nil, tags: liveZone?.tags ?? [:]))
            if pipelined {
                try builder.add(zone)
                builder.live.zones[zone.name] = nil
            }
        }
        if !pipelined || ownerRecordName == nil {
            for zone in zones {
                if ownerRecordName == nil { zoneBases.append(ZoneBasis(zoneName: zone.name, exists: false)) }
                try builder.add(zone)
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
        let plan = Plan(
            recipeName: recipe.name, storeName: store.displayName,
            owner: plannedOwner, users: plannedUsers, changes: changes, notes: notes, waiting: builder.waiting,
            basis: basis,
            access: PlanAccess.make(liveShares: liveShares, changes: changes, users: plannedUsers, owner: plannedOwner))
        logger.debug("planned \(recipe.name): \(plan.summary.line) (\(calls) store calls)")
        return plan
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
