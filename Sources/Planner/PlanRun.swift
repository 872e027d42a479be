import Applier
import Foundation
import Logging
import PlanModel
import Recipe
import ShareKit

/// One run of a plan, as `ApplyRun` is one of an apply: the zones taken from the cache file (`incremental`),
/// read in part (`partial`) and read whole, planned in the recipe's order with one `PlanBuilder`, then the
/// public records, the subscriptions and the schema. What the run keeps for the next plan is
/// `PlanRun+Cache.swift`'s.
///
/// Each zone is planned as soon as it is read, while the next zones are read, and its records are let go once
/// planned: only their change tags stay, for the plan's basis. A `!share-url` naming another zone's share
/// needs that zone's live share, so such a recipe is read whole first (`pipelined` false).
struct PlanRun {
    let planner: Planner
    let recipe: Recipe
    /// The zones the plan is about (`--only` applied), in the recipe's order.
    let zones: [DeclaredZone]
    let users: UserDirectory
    let options: PlanOptions
    let reader: LiveStateReader
    /// What the cache file answered, and the memo the run writes for the next plan.
    var incremental: IncrementalRead
    /// The zones read in part, by index in `zones`.
    let partial: [Int: PartialZone]
    /// The recipe the cache file remembers, when it may.
    let remember: RememberedRecipe?
    /// Whether `zones` hold every record (a loaded recipe): the declared records of the zones that plan to no
    /// changes, or that an apply may leave as declared, are then kept for the next plan.
    let writesRecords: Bool
    /// Whether the cache file keeps the recipe and its records as they are.
    let recipeKept: Bool
    /// What every zone's digest depends on besides its declaration.
    let context: PlanMemo.Context

    var builder: PlanBuilder
    /// Whether each zone is planned as it is read (false when a record names another zone's share).
    let pipelined: Bool
    var zoneBases: [ZoneBasis] = []
    var liveShares: [Share] = []
    /// Store calls, those of the cache's and the partial reads included.
    var calls: Int
    /// The zones with changes that an apply may leave as declared (`CacheAfterApply`).
    var pending: [String: CacheAfterApply.Pending] = [:]
    /// The declared records of planned zones being written beside the cache file.
    var recordWrites: [Task<Void, Never>] = []
    /// The next zone, in `zones`, whose remembered or partial plan is still to take.
    var nextZone = 0
    /// Each zone's change token, for zones read before they are planned (not pipelined).
    var tokens: [Int: ChangeToken] = [:]

    var store: any Store { planner.store }
    /// The owner's record name; nil while the store does not have the owner, who then owns nothing.
    var ownerRecordName: UserRecordName? { users.owner.recordName }

    init(
        planner: Planner, recipe: Recipe, zones: [DeclaredZone], users: UserDirectory, options: PlanOptions,
        reader: LiveStateReader, incremental: IncrementalRead, partial: [Int: PartialZone],
        remember: RememberedRecipe?, writesRecords: Bool, recipeKept: Bool, context: PlanMemo.Context
    ) {
        self.planner = planner
        self.recipe = recipe
        self.zones = zones
        self.users = users
        self.options = options
        self.reader = reader
        self.incremental = incremental
        self.partial = partial
        self.remember = remember
        self.writesRecords = writesRecords
        self.recipeKept = recipeKept
        self.context = context
        builder = PlanBuilder(
            recipe: recipe, users: users, live: LiveState(zones: [:], publicRecords: [:], storeCalls: 0),
            actsAsAnyUser: planner.store.capabilities.actsAsAnyUser, prune: options.prune)
        builder.destroy = options.destroy
        pipelined = !Planner.namesSharesOfOtherZones(recipe)
        calls = incremental.calls + partial.values.reduce(0) { $0 + $1.calls }
    }

    /// The plan; writes the cache file for the next plan.
    mutating func plan() async throws -> Plan {
        // The plan says what it leaves out; the command line prints it once, with the plan.
        let undeclared = options.onlyZones.filter { recipe.zone($0) == nil }.map {
            "only: zone \($0) is not declared in recipe \(recipe.name); nothing to plan for it."
        }
        let publicRecords = options.onlyZones.isEmpty ? recipe.publicRecords : []
        // The schema is read while the zones are: over a link of 80 ms, one round trip less.
        let (planner, declared) = (self.planner, self.recipe)
        let schemaReader = ownerRecordName ?? users.entries.lazy.compactMap(\.recordName).first
        let schema = Task { try await planner.planSchema(declared, reader: schemaReader) }
        defer { schema.cancel() }
        let toRead = try await planZones()
        let (livePublic, publicCalls) = try await reader.readPublic(
            ownerRecordName == nil ? [] : publicRecords.map(\.name))
        calls += publicCalls
        builder.live.publicRecords = livePublic
        try builder.addPublic(publicRecords)
        let rearm = try await planSubscriptions()
        let readBasis = LiveBasis(
            zones: zoneBases,
            publicRecordNames: publicRecords.map(\.name),
            publicTags: livePublic.compactMapValues { $0.changeTag ?? "" }
        )
        let basis = basisNamingUndeclared(readBasis)
        var changes = builder.takeOrderedChanges()
        var notes = undeclared + builder.notes
        if !options.targets.isEmpty {
            let targets = try options.targets.map { (text) throws(PlannerError) in try PlanTarget(parsing: text) }
            let selection = TargetSelection.select(changes, targets: targets)
            changes = selection.kept
            // A target the recipe declares but that needs no change is said; one naming nothing is a typo.
            let declaredAddresses = PlanTarget.declaredAddresses(of: recipe)
            for target in selection.unmatched where !declaredAddresses.contains(target.description) {
                throw PlannerError.unknownTarget(
                    target.description,
                    closest: Suggestion.closest(to: target.description, in: declaredAddresses))
            }
            notes += selection.unmatched.map { "--target '\($0)' names nothing this plan changes." }
            // Terraform's warning: a targeted plan is partial.
            notes.append(
                "Resource targeting is in effect: this plan holds only "
                    + targets.map { "'\($0)'" }.joined(separator: ", ")
                    + " and what \(targets.count == 1 ? "it needs" : "they need"), so it may not show every change "
                    + "the recipe makes. Use --target for "
                    + "exceptional cases, and plan without it to see the rest.")
        }
        var plan = makePlan(changes: changes, notes: notes, basis: basis)
        // A targeted plan writes only what it names; its writes are left to consume what they fire.
        if options.targets.isEmpty && !rearm.isEmpty { plan.rearm = rearm }
        plan.schema = try await schema.value
        await writeCache(for: &plan, readAnyZone: !toRead.isEmpty)
        let fromCache = incremental.remembered.count + partial.count
        planner.logger.debug(
            "planned \(recipe.name): \(plan.summary.line) (\(calls) store calls, \(fromCache) zone\(fromCache == 1 ? "" : "s") from the cache)"
        )
        return plan
    }

    // MARK: - Zones

    /// Plans every zone in the recipe's order: remembered, read in part, or read whole.
    /// - Returns: the zones read whole from the store.
    private mutating func planZones() async throws -> [Int] {
        let toRead =
            ownerRecordName == nil
            ? [] : zones.indices.filter { incremental.remembered[$0] == nil && partial[$0] == nil }
        if incremental.listed == nil, !toRead.isEmpty {
            // Listed here rather than by `readZones`, which would list them all the same: the plan keeps their
            // names (`Plan.listedZones`).
            incremental.listed = try await reader.listZones()
            calls += 1
        }
        calls += try await reader.readZones(toRead.map { zones[$0].name }, listed: incremental.listed) {
            position, read in
            let index = toRead[position]
            try takeRemembered(upTo: index)
            let zone = zones[index]
            let liveZone = read?.zone
            if let liveZone { liveShares += liveZone.shares.values }
            builder.live.zones[zone.name] = liveZone
            zoneBases.append(ZoneBasis(zoneName: zone.name, exists: liveZone != nil, tags: liveZone?.tags ?? [:]))
            if pipelined {
                try planRead(index, liveZone, token: read?.token)
                builder.live.zones[zone.name] = nil
            } else {
                tokens[index] = read?.token
            }
            nextZone = index + 1
        }
        try takeRemembered(upTo: ownerRecordName == nil ? 0 : zones.count)
        if ownerRecordName == nil {
            // No owner in the store: nothing is live, nothing was remembered (`IncrementalRead` remembers
            // nothing without an owner), and no zone's plan depends on another's. The zones are added on every
            // core, a few at a time (`PlanBuilder.eachAlone`), so that their changes are not all held twice.
            for start in stride(from: 0, to: zones.count, by: Planner.zonesAddedAtOnce) {
                let end = min(start + Planner.zonesAddedAtOnce, zones.count)
                for (index, alone) in zip(start..<end, builder.eachAlone(zones[start..<end])) {
                    zoneBases.append(ZoneBasis(zoneName: zones[index].name, exists: false))
                    try planRead(index, nil, token: nil, alone: alone)
                }
            }
        } else if !pipelined {
            for (index, zone) in zones.enumerated() {
                if incremental.remembered[index] != nil {
                    planRemembered(index)
                } else {
                    try planRead(index, builder.live.zones[zone.name], token: tokens[index])
                }
            }
        }
        return toRead
    }

    /// Takes the remembered and partly read zones before `end` in the recipe's order: their bases and
    /// shares, and their plans (pipelined) or their shares for other zones' `!share-url` (read whole first).
    private mutating func takeRemembered(upTo end: Int) throws {
        while nextZone < end {
            let name = zones[nextZone].name
            if let changed = partial[nextZone] {
                let tags = changed.tags
                liveShares += changed.known.shares
                zoneBases.append(ZoneBasis(zoneName: name, exists: true, tags: tags))
                try planPartial(nextZone, changed, tags: tags)
            } else if let remembered = incremental.remembered[nextZone] {
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

    /// Plans a zone from the cache file: its notes and waiting lines, kept for the next plan, under the
    /// zone's digests now (a zone whose shares only moved in the file is kept with its declared records).
    private mutating func planRemembered(_ index: Int) {
        guard var remembered = incremental.remembered[index] else { return }
        builder.notes += remembered.notes
        builder.waiting += remembered.waiting
        let name = zones[index].name
        if let digest = incremental.digests[index], digest != remembered.digest {
            remembered.digest = digest
            keepDeclaredRecords(index)
        }
        remembered.placeless = incremental.placeless[index] ?? remembered.placeless
        incremental.memo?.zones[name] = remembered
    }

    /// Plans the records of a zone that changed since the cache file's plan; the rest of the zone is as that
    /// plan found it (its notes and waiting lines too).
    private mutating func planPartial(_ index: Int, _ changed: PartialZone, tags: ChangeTags) throws {
        var zone = zones[index]
        zone.records = changed.declared
        zone.share = nil
        let changesBefore = builder.changeCount
        builder.live.zones[zone.name] = changed.liveZone
        try builder.add(zone)
        builder.live.zones[zone.name] = nil
        builder.notes += changed.known.notes
        builder.waiting += changed.known.waiting
        if builder.changeCount == changesBefore {
            rememberUnchanged(partial: changed, tags: tags)
        } else {
            keepForApply(
                index, undeclared: changed.known.undeclared,
                // The records it keeps are those the cache file's plan named: none of them changed.
                notes: changed.known.undeclared == 0 ? [] : changed.known.notes.filter(PlanBuilder.isUndeclaredNote),
                waiting: changed.known.waiting, read: .init(token: changed.token, shares: changed.known.shares))
        }
    }

    /// Plans a zone from its live state, and keeps it for the next plan when it plans to no changes.
    /// - Parameter alone: the zone already added to a builder of its own (`PlanBuilder.eachAlone`).
    private mutating func planRead(
        _ index: Int, _ liveZone: LiveZone?, token: ChangeToken?, alone: Result<PlanBuilder, any Error>? = nil
    ) throws {
        let zone = zones[index]
        let (changesBefore, notesBefore, waitingBefore) =
            (builder.changeCount, builder.notes.count, builder.waiting.count)
        if let alone { builder.append(try alone.get()) } else { try builder.add(zone) }
        guard incremental.digests[index] != nil, incremental.contents[index] != nil else { return }
        var undeclaredNames: [String] = []
        if let liveZone {
            let declared = Set(zone.records.map(\.name))
            undeclaredNames = liveZone.recordOrder.filter { !declared.contains($0) }
        }
        let undeclared = undeclaredNames.count
        if builder.changeCount == changesBefore {
            rememberUnchanged(
                index, liveZone, token: token, undeclared: undeclared, notesFrom: notesBefore,
                waitingFrom: waitingBefore)
        } else {
            // After the apply, the undeclared records are pruned, or kept with the same note.
            let pruned = options.prune || zone.prune
            keepForApply(
                index, undeclared: pruned ? 0 : undeclared,
                notes: pruned || undeclared == 0 ? [] : [PlanBuilder.undeclaredNote(undeclaredNames, zone: zone.name)],
                waiting: Array(builder.waiting[waitingBefore...]),
                read: liveZone.flatMap { live in token.map { .init(token: $0, shares: Array(live.shares.values)) } })
            guard pending[zone.name] != nil else { return }
        }
        keepDeclaredRecords(index)
    }

    // MARK: - Subscriptions and the plan

    /// Plans the recipe's subscriptions: read on every plan, from the cache file or not, as no change feed
    /// tells of them.
    /// - Returns: the subscriptions the apply's writes fire, to consume again (`Plan.rearm`).
    private mutating func planSubscriptions() async throws -> [PlannedSubscription] {
        guard options.onlyZones.isEmpty && !recipe.subscriptions.isEmpty else { return [] }
        let subscriptions = try await SubscriptionPlan.make(
            recipe.subscriptions, users: users, store: store, actsAsAnyUser: store.capabilities.actsAsAnyUser,
            prune: options.prune, destroy: options.destroy)
        calls += subscriptions.calls
        builder.subscriptionSaves = subscriptions.saves
        builder.subscriptionDeletes = subscriptions.deletes
        builder.notes += subscriptions.notes
        builder.waiting += subscriptions.waiting
        return subscriptions.rearm
    }

    /// The plan of these changes, with its users, basis and access changes.
    /// `basis` with each zone's undeclared live records named, so that a saved plan is refused only when
    /// something it reads or writes changed: the zone's shares, the records the recipe declares, the records
    /// it writes. A zone the plan prunes or deletes depends on every record in it, and so does every zone
    /// when the recipe's records were not loaded (an unchanged recipe taken from the cache).
    private func basisNamingUndeclared(_ basis: LiveBasis) -> LiveBasis {
        guard writesRecords, !options.destroy else { return basis }
        var basis = basis
        let declaredZones = Dictionary(zones.map { ($0.name, $0) }) { first, _ in first }
        var shareNames: [String: Set<String>] = [:]
        for share in liveShares { shareNames[share.zoneID.zoneName, default: []].insert(share.recordName) }
        for index in basis.zones.indices {
            let name = basis.zones[index].zoneName
            guard let zone = declaredZones[name], !zone.absent, !zone.prune, !options.prune else { continue }
            let declared = Set(zone.records.map(\.name))
            let shares = shareNames[name, default: []].union([zoneShareRecordName])
            basis.zones[index].undeclared = basis.zones[index].tags.keys
                .filter { !declared.contains($0) && !shares.contains($0) }.sorted()
        }
        return basis
    }

    private func makePlan(changes: [PlannedChange], notes: [String], basis: LiveBasis) -> Plan {
        // The directory holds the recipe's users in the recipe's order (`UserDirectory.make`): each entry's
        // declaration is at its own position, checked, and found by handle otherwise. `recipe.user` scans the
        // users, and a scan for each user was 0.9 s of the 1 s of CPU that the no-op plan of 10,000 users took.
        let declaredUsers = recipe.users
        var byHandle: [String: DeclaredUser]?
        func declared(_ entry: UserDirectory.Entry, at position: Int) -> DeclaredUser? {
            if position < declaredUsers.count, declaredUsers[position].handle == entry.handle {
                return declaredUsers[position]
            }
            if byHandle == nil {
                byHandle = Dictionary(declaredUsers.map { ($0.handle, $0) }, uniquingKeysWith: { first, _ in first })
            }
            return byHandle?[entry.handle]
        }
        let owner = users.owner
        let declaredOwner = recipe.user(owner.handle)
        let plannedOwner = PlannedUser(
            handle: owner.handle, email: owner.email, name: owner.name, recordName: ownerRecordName ?? "",
            phone: declaredOwner?.phone, discoverable: declaredOwner?.discoverable)
        var plannedUsers: [PlannedUser] = []
        plannedUsers.reserveCapacity(users.entries.count)
        for (position, entry) in users.entries.enumerated() {
            let user = declared(entry, at: position)
            plannedUsers.append(
                PlannedUser(
                    handle: entry.handle, email: entry.email, name: entry.name, recordName: entry.recordName ?? "",
                    phone: user?.phone, discoverable: user?.discoverable))
        }
        var plan = Plan(
            recipeName: recipe.name, storeName: store.displayName,
            owner: plannedOwner, users: plannedUsers, changes: changes, notes: notes, waiting: builder.waiting,
            basis: basis,
            access: PlanAccess.make(liveShares: liveShares, changes: changes, users: plannedUsers, owner: plannedOwner))
        plan.assetFiles = Planner.assetFiles(of: changes, recipe: recipe)
        plan.listedZones.names = incremental.listed.map { Set($0.map(\.zoneID.zoneName)) }
        plan.container = recipe.container
        plan.environment = recipe.environment
        let encrypted = recipe.schema.schema.recordTypes.values.flatMap { type in
            type.fields.values.filter(\.isEncrypted).map { "\(type.name).\($0.name)" }
        }
        plan.encryptedFields = encrypted.isEmpty ? nil : encrypted.sorted()
        var generatedNames: [String: [String]] = [:]
        for zone in zones where !zone.generated.isEmpty {
            generatedNames[zone.name] = zone.generated.map(\.nameTemplate)
        }
        if !recipe.generatedPublicRecords.isEmpty {
            generatedNames[GeneratedRun.publicZone] = recipe.generatedPublicRecords.map(\.nameTemplate)
        }
        plan.generatedNames = generatedNames.isEmpty ? nil : generatedNames
        return plan
    }
}
