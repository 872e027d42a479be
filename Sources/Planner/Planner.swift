import Applier
import Foundation
import Logging
import PlanModel
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
    /// The most store calls a plan has under way at once (`plan --parallelism`).
    public let parallelism: Int

    /// A planner over `store`, logging to `logger`, with at most `parallelism` store calls under way.
    public init(store: any Store, logger: Logger, parallelism: Int = Parallelism.default) {
        self.store = store
        self.logger = logger
        self.parallelism = max(1, parallelism)
    }

    /// Looks up the recipe's users, creating none, and plans the recipe against the store: a plan changes
    /// nothing in any store.
    /// - Parameter inputs: what the recipe was loaded from (`RecipeLoader.loadWithInputs`): with a cache, the
    ///   next plan of the same inputs can plan without loading them (`plan(_:options:load:)`).
    /// - Throws: `PlannerError` when a user cannot be looked up or the store cannot be read.
    public func plan(_ recipe: Recipe, inputs: RecipeInputs? = nil, options: PlanOptions = PlanOptions())
        async throws -> Plan
    {
        let users = try await UserDirectory.lookUp(recipe, store: store, logger: logger, parallelism: parallelism)
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
                recipe.hasSeveralOwners
                    ? "planning \(unchanged.recipe.name) from the cache: each owner's zones from that owner's file"
                    : "the cache file cannot plan \(unchanged.recipe.name) alone: planning it whole, its records from the cache"
            )
            let users = try await UserDirectory.lookUp(recipe, store: store, logger: logger, parallelism: parallelism)
            return try await plan(
                recipe, users: users, options: options, inputs: inputs, kept: unchanged.memo.recipe?.contents)
        }
        logger.debug("the cache file cannot plan \(unchanged.recipe.name) alone: loading it")
        let (recipe, inputs) = try load()
        return try await plan(recipe, inputs: inputs, options: options)
    }

    /// The recipe the cache file remembers, with every zone's declared records from the files beside it: the
    /// recipe its unchanged files would load, without loading them (a plan, then the apply of a new store,
    /// whose users the file cannot know before they sign in). nil when a zone's records are not
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
    ///   declaration digest (`PlanMemo.contents(of:)`) by zone name: the zones are not digested again, and the
    ///   file need not keep them again.
    func plan(
        _ recipe: Recipe, users: UserDirectory, options: PlanOptions, inputs: RecipeInputs?, kept: [String: String]?
    ) async throws -> Plan {
        if recipe.hasSeveralOwners {
            return try await planOwners(recipe, users: users, options: options, inputs: inputs, kept: kept)
        }
        let zones = Self.zones(of: recipe, options: options)
        let reader = LiveStateReader(
            store: store, owner: users.owner.recordName ?? "", logger: logger, parallelism: parallelism)
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
                return PlanMemo.Digests(full: PlanMemo.digest(context: contextKey, content: content), content: content)
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
        // A recipe of several owners is planned by its owners' parts, each from its own file (`planOwners`).
        guard let cache = options.cache, cache.refresh == .incremental, let remembered = memo.recipe,
            !remembered.header.hasSeveralOwners, memo.storeName == store.displayName,
            remembered.options
                == PlanMemo.optionsKey(
                    prune: options.prune, destroy: options.destroy, actsAsAnyUser: store.capabilities.actsAsAnyUser),
            remembered.users.entries.allSatisfy({ $0.recordName != nil }),
            let ownerEntry = remembered.users.listedOwner
        else { return nil }
        // The owner must still be the user the file knows (a store made again has other users); the other
        // users are known from the file: a store never deletes a user, and a store made again refuses the
        // file's token.
        guard let owner = try? await store.signInExisting(email: ownerEntry.email), owner.recordName == memo.owner
        else { return nil }
        var recipe = remembered.header
        var zones = Self.zones(of: recipe, options: options)
        let reader = LiveStateReader(store: store, owner: memo.owner, logger: logger, parallelism: parallelism)
        let incremental = try await IncrementalRead(
            cache: cache, known: memo, reader: reader, owner: memo.owner, zones: zones, alwaysRead: [],
            digest: { zone in
                // The recipe is the one the file keeps: its zones' digests are the file's, and so is the digest
                // without places of each zone the file found as declared.
                let full = remembered.digests[zone.name] ?? ""
                let known = memo.zones[zone.name].flatMap { $0.digest == full ? $0.placeless : nil }
                return PlanMemo.Digests(full: full, content: remembered.contents[zone.name] ?? "", placeless: known)
            })
        guard incremental.previous != nil else { return nil }
        let directory = PlanMemo.recordsDirectory(of: cache.file)
        // The zones that may be read in part, read `parallelism` at a time (over `http:` each is a request).
        var mayBePartial: [(index: Int, name: String, known: PlanMemo.Zone, file: DeclaredRecordFile)] = []
        for (index, zone) in zones.enumerated() where incremental.remembered[index] == nil {
            guard let digest = remembered.digests[zone.name], let content = remembered.contents[zone.name] else {
                return nil
            }
            if !options.destroy, !zone.absent, let known = memo.zones[zone.name], known.digest == digest,
                known.exists, incremental.existing.contains(zone.name)
            {
                mayBePartial.append(
                    (index, zone.name, known, DeclaredRecordFile(directory: directory, digest: content)))
            }
        }
        var partial: [Int: PartialZone] = [:]
        // Over Web Services the reads made at once go a few zones a request: more of them under way.
        let together = (store as? any ReadsZoneFeedsTogether)?.zoneFeedsPerRequest ?? 1
        await BoundedTasks.run(mayBePartial, limit: reader.zonesInFlight * together) { candidate in
            await PartialZone.read(
                zoneName: candidate.name, known: candidate.known, file: candidate.file, reader: reader)
        } receive: { candidate, changed in
            partial[candidate.index] = changed
        }
        for (index, zone) in zones.enumerated() where incremental.remembered[index] == nil {
            guard let content = remembered.contents[zone.name] else { return nil }
            if partial[index] != nil { continue }
            let file = DeclaredRecordFile(directory: directory, digest: content)
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
    /// read whole (the others), as one `PlanRun`; it writes the cache file for the next plan.
    private func build(
        _ recipe: Recipe, zones: [DeclaredZone], users: UserDirectory, options: PlanOptions,
        reader: LiveStateReader, incremental: IncrementalRead, partial: [Int: PartialZone],
        remember: RememberedRecipe?, writesRecords: Bool, recipeKept: Bool, context: PlanMemo.Context
    ) async throws -> Plan {
        var run = PlanRun(
            planner: self, recipe: recipe, zones: zones, users: users, options: options, reader: reader,
            incremental: incremental, partial: partial, remember: remember, writesRecords: writesRecords,
            recipeKept: recipeKept, context: context)
        return try await run.plan()
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
    func planSchema(_ recipe: Recipe, reader: UserRecordName?) async throws -> PlannedSchema? {
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
