import Foundation
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
    /// - Parameter inputs: what the recipe was loaded from (`RecipeLoader.loadWithInputs`): with a cache, the
    ///   next plan of the same inputs can plan without loading them (`plan(_:options:load:)`).
    /// - Throws: `PlannerError` when a user cannot be looked up or the store cannot be read.
    public func plan(_ recipe: Recipe, inputs: RecipeInputs? = nil, options: PlanOptions = PlanOptions())
        async throws -> Plan
    {
        let users = try await UserDirectory.lookUp(recipe, store: store, logger: logger)
        return try await plan(recipe, users: users, options: options, inputs: inputs)
    }

    /// Plans a recipe whose files are unchanged since the cache's last plan (`PlanCache.unchangedRecipe`)
    /// from the cache file and the store's change feeds, without loading it: the zones that did not change
    /// are planned from the file, the records that changed in the others are read, and a zone is read whole
    /// only when more than its records changed. When the file cannot answer (another store or owner, a token
    /// the store refuses, a zone the file does not hold), `load` loads the recipe and the plan is the usual one.
    /// - Throws: `PlannerError` when a user cannot be looked up or the store cannot be read; what `load` throws.
    public func plan(
        _ unchanged: UnchangedRecipe, options: PlanOptions = PlanOptions(),
        load: () throws -> (recipe: Recipe, inputs: RecipeInputs)
    ) async throws -> Plan {
        if let plan = try await planFromCache(unchanged, options: options) { return plan }
        if let (recipe, inputs) = Self.recipeFromCache(unchanged, options: options) {
            logger.debug(
                "the cache file cannot plan \(unchanged.recipe.name) alone: planning it whole, its records from the cache"
            )
            let users = try await UserDirectory.lookUp(recipe, store: store, logger: logger)
            return try await plan(
                recipe, users: users, options: options, inputs: inputs, kept: unchanged.memo.recipe?.contents)
        }
        logger.debug("the cache file cannot plan \(unchanged.recipe.name) alone: loading it")
        let (recipe, inputs) = try load()
        return try await plan(recipe, inputs: inputs, options: options)
    }

    /// The recipe the cache file remembers, with every zone's declared records from the files beside it: the
    /// recipe its unchanged files would load, without loading them (a plan, then the apply of a new store,
    /// whose users the file cannot know before they sign in; issue 18). nil when a zone's records are not
    /// kept (the file's plan could not keep them, or they were removed) or a file is damaged.
    static func recipeFromCache(_ unchanged: UnchangedRecipe, options: PlanOptions) -> (Recipe, RecipeInputs)? {
        guard let cache = options.cache, cache.refresh == .incremental, let remembered = unchanged.memo.recipe
        else { return nil }
        let directory = PlanMemo.recordsDirectory(of: cache.file)
        var recipe = remembered.header
        let names = recipe.zones.map(\.name)
        // On every core, as a recipe's zones are decoded when it is loaded.
        let parts = OnEveryCore.parts(of: names.count, atLeast: OnEveryCore.zonesPerPart)
        let read = OnEveryCore.map(parts.count) { part in
            parts[part].map { index in
                remembered.contents[names[index]].flatMap {
                    DeclaredRecordFile(directory: directory, digest: $0).records()
                }
            }
        }
        for (index, records) in zip(names.indices, read.joined()) {
            guard let records else { return nil }
            recipe.zones[index].records = records
        }
        return (recipe, remembered.inputs)
    }

    /// Plans the recipe against the store, with users already signed in.
    /// - Throws: `PlannerError` when a user has no account or the store cannot be read.
    public func plan(
        _ recipe: Recipe, users: UserDirectory, options: PlanOptions = PlanOptions(), inputs: RecipeInputs? = nil
    ) async throws -> Plan {
        try await plan(recipe, users: users, options: options, inputs: inputs, kept: nil)
    }

    /// Plans the recipe against the store, with users already signed in.
    /// - Parameter kept: when the recipe is the one the cache file keeps (`recipeFromCache`), each zone's
    ///   declaration digest (`PlanMemo.content(of:)`) by zone name: the zones are not digested again, and the
    ///   file need not keep them again.
    private func plan(
        _ recipe: Recipe, users: UserDirectory, options: PlanOptions, inputs: RecipeInputs?, kept: [String: String]?
    ) async throws -> Plan {
        let zones = Self.zones(of: recipe, options: options)
        let reader = LiveStateReader(store: store, owner: users.owner.recordName ?? "", logger: logger)
        let optionsKey = PlanMemo.optionsKey(
            prune: options.prune, destroy: options.destroy, actsAsAnyUser: store.capabilities.actsAsAnyUser)
        let context = PlanMemo.Context(
            recipe: recipe, users: users, prune: options.prune, destroy: options.destroy,
            actsAsAnyUser: store.capabilities.actsAsAnyUser)
        let contextKey = context.key
        // A zone whose records name another zone's share depends on that zone too: it is always read.
        let incremental = try await IncrementalRead(
            cache: options.cache, reader: reader, owner: users.owner.recordName, zones: zones,
            alwaysRead: Set(zones.filter { Self.namesSharesOfOtherZones($0) }.map(\.name)),
            digest: { zone in
                guard let content = kept?[zone.name] else { return PlanMemo.digests(of: zone, context: contextKey) }
                return (PlanMemo.digest(context: contextKey, content: content), content)
            })
        // A recipe whose `!share-url` names another zone's share is read whole first: the cache does not
        // remember it.
        let remember = inputs.flatMap { inputs in
            Self.namesSharesOfOtherZones(recipe)
                ? nil
                : RememberedRecipe(recipe: recipe, inputs: inputs, users: users, options: optionsKey, digests: [:])
        }
        return try await build(
            recipe, zones: zones, users: users, options: options, reader: reader, incremental: incremental,
            partial: [:], remember: remember, writesRecords: true, recipeKept: kept != nil, context: context)
    }

    /// The plan from the cache file and the change feeds, or nil when the file cannot answer alone.
    private func planFromCache(_ unchanged: UnchangedRecipe, options: PlanOptions) async throws -> Plan? {
        let memo = unchanged.memo
        guard let cache = options.cache, cache.refresh == .incremental, let remembered = memo.recipe,
            memo.storeName == store.displayName,
            remembered.options
                == PlanMemo.optionsKey(
                    prune: options.prune, destroy: options.destroy, actsAsAnyUser: store.capabilities.actsAsAnyUser),
            remembered.users.entries.allSatisfy({ $0.recordName != nil }),
            let ownerEntry = remembered.users.entries.first(where: { $0.handle == remembered.users.ownerHandle })
        else { return nil }
        // The owner must still be the user the file knows (a store made again has other users); the other
        // users are known from the file: a store never deletes a user, and a store made again refuses the
        // file's token.
        guard let owner = try? await store.signInExisting(email: ownerEntry.email), owner.recordName == memo.owner
        else { return nil }
        var recipe = remembered.header
        var zones = Self.zones(of: recipe, options: options)
        let reader = LiveStateReader(store: store, owner: memo.owner, logger: logger)
        let incremental = try await IncrementalRead(
            cache: cache, known: memo, reader: reader, owner: memo.owner, zones: zones, alwaysRead: [],
            digest: { (remembered.digests[$0.name] ?? "", remembered.contents[$0.name] ?? "") })
        guard incremental.previous != nil else { return nil }
        let directory = PlanMemo.recordsDirectory(of: cache.file)
        var partial: [Int: PartialZone] = [:]
        for (index, zone) in zones.enumerated() where incremental.remembered[index] == nil {
            guard let digest = remembered.digests[zone.name], let content = remembered.contents[zone.name] else {
                return nil
            }
            let file = DeclaredRecordFile(directory: directory, digest: content)
            if !options.destroy, !zone.absent, let known = memo.zones[zone.name], known.digest == digest,
                known.exists, incremental.existing.contains(zone.name),
                let changed = await PartialZone.read(zoneName: zone.name, known: known, file: file, reader: reader)
            {
                partial[index] = changed
                continue
            }
            guard let records = file.records() else { return nil }
            zones[index].records = records
            if let position = recipe.zones.firstIndex(where: { $0.name == zone.name }) {
                recipe.zones[position].records = records
            }
        }
        return try await build(
            recipe, zones: zones, users: remembered.users, options: options, reader: reader,
            incremental: incremental, partial: partial, remember: remembered, writesRecords: false, recipeKept: true,
            context: PlanMemo.Context(
                recipe: recipe, users: remembered.users, prune: options.prune, destroy: options.destroy,
                actsAsAnyUser: store.capabilities.actsAsAnyUser))
    }

    /// How many zones are added at once when each plans alone (`PlanBuilder.eachAlone`): a few a core.
    static let zonesAddedAtOnce = 4 * OnEveryCore.cores

    /// The zones a plan with these options is about.
    private static func zones(of recipe: Recipe, options: PlanOptions) -> [DeclaredZone] {
        options.onlyZones.isEmpty ? recipe.zones : recipe.zones.filter { options.onlyZones.contains($0.name) }
    }

    /// The plan, from the zones remembered (`incremental`), the zones read in part (`partial`) and the zones
    /// read whole (the others); writes the cache file for the next plan.
    /// - Parameter writesRecords: whether `zones` hold every record (a loaded recipe), so that the declared
    ///   records of the zones that plan to no changes, or that an apply may leave as declared, can be kept for
    ///   the next plan.
    /// - Parameter recipeKept: whether the cache file keeps the recipe and its records as they are.
    /// - Parameter context: what every zone's digest depends on besides its declaration.
    private func build(
        _ recipe: Recipe, zones: [DeclaredZone], users: UserDirectory, options: PlanOptions,
        reader: LiveStateReader, incremental start: IncrementalRead, partial: [Int: PartialZone],
        remember: RememberedRecipe?, writesRecords: Bool, recipeKept: Bool, context: PlanMemo.Context
    ) async throws -> Plan {
        var incremental = start
        // An owner the store does not have yet owns nothing: everything the recipe declares is to create.
        let ownerRecordName = users.owner.recordName
        // The plan says what it leaves out; the command line prints it once, with the plan.
        let undeclared = options.onlyZones.filter { recipe.zone($0) == nil }.map {
            "only: zone \($0) is not declared in recipe \(recipe.name); nothing to plan for it."
        }
        let publicRecords = options.onlyZones.isEmpty ? recipe.publicRecords : []
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
        var calls = incremental.calls + partial.values.reduce(0) { $0 + $1.calls }
        /// The zones with changes that an apply may leave as declared (`CacheAfterApply`).
        var pending: [String: CacheAfterApply.Pending] = [:]
        /// Keeps a zone that planned to changes for the apply, whose plan after a successful apply is known: no
        /// change, no waiting line (the store acts as every participant), only the note of the undeclared
        /// records it keeps.
        func keepForApply(_ index: Int, undeclared: Int, notes: [String], waiting: [String]) {
            let zone = zones[index]
            guard let content = incremental.contents[index], options.targets.isEmpty, !options.destroy,
                store.capabilities.actsAsAnyUser, !zone.absent, zone.name != defaultZoneName, waiting.isEmpty
            else { return }
            pending[zone.name] = CacheAfterApply.Pending(content: content, undeclared: undeclared, notes: notes)
        }
        /// Plans a zone from the cache file: its notes and waiting lines, kept for the next plan.
        func planRemembered(_ index: Int) {
            guard let remembered = incremental.remembered[index] else { return }
            builder.notes += remembered.notes
            builder.waiting += remembered.waiting
            incremental.memo?.zones[zones[index].name] = remembered
        }
        /// Plans the records of a zone that changed since the cache file's plan; the rest of the zone is as
        /// that plan found it (its notes and waiting lines too).
        func planPartial(_ index: Int, _ changed: PartialZone, tags: ChangeTags) throws {
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
                var kept = changed.known
                kept.tags = tags
                kept.token = changed.token
                incremental.memo?.zones[zone.name] = kept
            } else {
                keepForApply(
                    index, undeclared: changed.known.undeclared,
                    notes: changed.known.undeclared == 0
                        ? [] : [PlanBuilder.undeclaredNote(count: changed.known.undeclared, zone: zone.name)],
                    waiting: changed.known.waiting)
            }
        }
        var recordWrites: [Task<Void, Never>] = []
        /// Plans a zone from its live state, and keeps it for the next plan when it plans to no changes.
        /// - Parameter alone: the zone already added to a builder of its own (`PlanBuilder.eachAlone`).
        func planRead(
            _ index: Int, _ liveZone: LiveZone?, token: ChangeToken?, alone: Result<PlanBuilder, any Error>? = nil
        ) throws {
            let zone = zones[index]
            let (changesBefore, notesBefore, waitingBefore) =
                (builder.changeCount, builder.notes.count, builder.waiting.count)
            if let alone { builder.append(try alone.get()) } else { try builder.add(zone) }
            guard let digest = incremental.digests[index], let content = incremental.contents[index] else { return }
            var undeclared = 0
            if let liveZone {
                let declared = Set(zone.records.map(\.name))
                undeclared = liveZone.recordOrder.count { !declared.contains($0) }
            }
            if builder.changeCount == changesBefore {
                incremental.memo?.zones[zone.name] = PlanMemo.Zone(
                    digest: digest, exists: liveZone != nil, tags: ChangeTags(liveZone?.tags ?? [:]),
                    shares: Array(liveZone?.shares.values ?? [:].values),
                    notes: Array(builder.notes[notesBefore...]), waiting: Array(builder.waiting[waitingBefore...]),
                    token: token, undeclared: undeclared)
            } else {
                // After the apply, the undeclared records are pruned, or kept with the same note.
                let pruned = options.prune || zone.prune
                keepForApply(
                    index, undeclared: pruned ? 0 : undeclared,
                    notes: pruned || undeclared == 0
                        ? [] : [PlanBuilder.undeclaredNote(count: undeclared, zone: zone.name)],
                    waiting: Array(builder.waiting[waitingBefore...]))
                guard pending[zone.name] != nil else { return }
            }
            // Its declared records beside the file, under the digest of its declaration, written while the next
            // zones are read and planned; a plan of the same files takes them from there (a recipe read from
            // those files leaves them as they are).
            if writesRecords, !recipeKept, remember != nil, let cache = options.cache {
                let records = zone.records
                let directory = PlanMemo.recordsDirectory(of: cache.file)
                recordWrites.append(
                    Task.detached(priority: .utility) {
                        DeclaredRecordFile.write(records, directory: directory, digest: content)
                    })
            }
        }
        var nextZone = 0
        /// Takes the remembered and partly read zones before `end` in the recipe's order: their bases and
        /// shares, and their plans (pipelined) or their shares for other zones' `!share-url` (read whole first).
        func takeRemembered(upTo end: Int) throws {
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
        var tokens: [Int: ChangeToken] = [:]
        let toRead =
            ownerRecordName == nil
            ? [] : zones.indices.filter { incremental.remembered[$0] == nil && partial[$0] == nil }
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
            // core, a few at a time (`PlanBuilder.eachAlone`), so that their changes are not all held twice
            // (issue 18).
            for start in stride(from: 0, to: zones.count, by: Self.zonesAddedAtOnce) {
                let end = min(start + Self.zonesAddedAtOnce, zones.count)
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
        let (livePublic, publicCalls) = try await reader.readPublic(
            ownerRecordName == nil ? [] : publicRecords.map(\.name))
        calls += publicCalls
        builder.live.publicRecords = livePublic
        try builder.addPublic(publicRecords)
        var rearm: [PlannedSubscription] = []
        // Subscriptions are read on every plan, from the cache file or not: no change feed tells of them.
        if options.onlyZones.isEmpty && !recipe.subscriptions.isEmpty {
            let subscriptions = try await SubscriptionPlan.make(
                recipe.subscriptions, users: users, store: store, actsAsAnyUser: store.capabilities.actsAsAnyUser,
                prune: options.prune, destroy: options.destroy)
            calls += subscriptions.calls
            builder.subscriptionSaves = subscriptions.saves
            builder.subscriptionDeletes = subscriptions.deletes
            rearm = subscriptions.rearm
            builder.notes += subscriptions.notes
            builder.waiting += subscriptions.waiting
        }
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
            handle: owner.handle, email: owner.email, name: owner.name, recordName: ownerRecordName ?? "",
            phone: recipe.user(owner.handle)?.phone, discoverable: recipe.user(owner.handle)?.discoverable)
        let plannedUsers = users.entries.map {
            PlannedUser(
                handle: $0.handle, email: $0.email, name: $0.name, recordName: $0.recordName ?? "",
                phone: recipe.user($0.handle)?.phone, discoverable: recipe.user($0.handle)?.discoverable)
        }
        var plan = Plan(
            recipeName: recipe.name, storeName: store.displayName,
            owner: plannedOwner, users: plannedUsers, changes: changes, notes: notes, waiting: builder.waiting,
            basis: basis,
            access: PlanAccess.make(liveShares: liveShares, changes: changes, users: plannedUsers, owner: plannedOwner))
        // A targeted plan writes only what it names; its writes are left to consume what they fire.
        if options.targets.isEmpty && !rearm.isEmpty { plan.rearm = rearm }
        plan.assetFiles = Self.assetFiles(of: changes, recipe: recipe)
        plan.container = recipe.container
        plan.environment = recipe.environment
        plan.schema = try await planSchema(
            recipe, reader: ownerRecordName ?? users.entries.lazy.compactMap(\.recordName).first)
        // A plan that took every zone from the file, the store's token unchanged, would write the same file.
        let unchanged =
            !writesRecords && toRead.isEmpty && partial.isEmpty && incremental.previous?.recipe != nil
            && incremental.previous?.databaseToken == incremental.memo?.databaseToken
            && incremental.previous?.zones.count == incremental.memo?.zones.count
        if let cache = options.cache, !unchanged {
            var remember = remember
            if remember != nil {
                for task in recordWrites { await task.value }
                for (index, digest) in incremental.digests { remember?.digests[zones[index].name] = digest }
                for (index, content) in incremental.contents { remember?.contents[zones[index].name] = content }
            }
            if var memo = incremental.memo {
                if let remember {
                    DeclaredRecordFile.removeAll(
                        in: PlanMemo.recordsDirectory(of: cache.file), except: Set(remember.contents.values))
                    memo.recipe = remember
                }
                memo.save(to: cache.file)
            } else if ownerRecordName == nil, !recipeKept, let remember {
                // The owner is not in the store yet, so nothing live is known: the file keeps only the recipe
                // (no owner, no token, no zone), for the apply that follows to plan it from the records kept
                // beside it without loading it (`recipeFromCache`).
                DeclaredRecordFile.removeAll(
                    in: PlanMemo.recordsDirectory(of: cache.file), except: Set(remember.contents.values))
                PlanMemo(
                    version: PlanMemo.currentVersion, storeName: store.displayName, owner: "",
                    databaseToken: ChangeToken(rawValue: ""), zones: [:], recipe: remember
                ).save(to: cache.file)
            }
            if !pending.isEmpty {
                // The apply writes the file again, the recipe with its users as they are then.
                plan.cacheAfterApply = CacheAfterApply(
                    file: cache.file, memo: incremental.memo, remember: remember, context: context, pending: pending)
            }
        }
        let fromCache = incremental.remembered.count + partial.count
        logger.debug(
            "planned \(recipe.name): \(plan.summary.line) (\(calls) store calls, \(fromCache) zone\(fromCache == 1 ? "" : "s") from the cache)"
        )
        return plan
    }

    /// The files of the `!asset` values the changes save, by `ASSETID` text (`PATH#fnv1a64:HEX`), as absolute
    /// paths: what a saved plan's apply uploads (`Plan.assetFiles`); nil when the changes save none.
    static func assetFiles(of changes: [PlannedChange], recipe: Recipe) -> [String: String]? {
        var files: [String: String] = [:]
        func add(_ value: FieldValue) {
            switch value {
            case .assetID(let text):
                guard files[text] == nil, let path = recipe.assetPath(for: text) else { return }
                files[text] = URL(fileURLWithPath: path).standardizedFileURL.path
            case .list(.assetID, let values):
                values.forEach(add)
            default:
                break
            }
        }
        // In place: copying each change and its fields into an array cost 1% of a 10,000-record apply.
        for index in changes.indices {
            guard let fields = changes[index].record?.fields else { continue }
            for case .value(let value) in fields.values { add(value) }
        }
        return files.isEmpty ? nil : files
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
