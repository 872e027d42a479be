import Applier
import Foundation
import PlanModel
import Recipe
import ShareKit
import SharingReport

// MARK: - Recipes with several owners

// A recipe whose zones have several owners is planned owner by owner, all at once, each owner's zones as that
// owner with the planning of a one-owner recipe (its reads, its cache file, its rules), and the plans are joined
// into one: its changes owner after owner, the recipe's owner first, who also holds the public records, the
// schema and the subscriptions. The apply takes the joined plan apart again (`Plan.ownerParts`) and applies
// each part as its owner, all at once (`Applier.applyOwners`), so every write to a private database is its
// owner's, and nothing crosses owners' databases but through shares.

extension Planner {
    /// The plan of a recipe with several owners: each owner's part planned as a recipe of its own, joined.
    /// - Parameters:
    ///   - inputs: what the recipe was loaded from: the recipe owner's cache file then remembers the whole
    ///     recipe, so that the next command plans it without loading it (`rememberOwners`).
    ///   - kept: each zone's declaration digest, when the recipe is the one the cache file keeps
    ///     (`Planner.recipeFromCache`).
    func planOwners(
        _ recipe: Recipe, users: UserDirectory, options: PlanOptions, inputs: RecipeInputs? = nil,
        kept: [String: String]? = nil
    ) async throws -> Plan {
        var parts: [Plan] = []
        // The zones' declaration digests, once for every part; the records of each are written beside the
        // recipe owner's cache file while the parts are planned.
        var digests = kept
        var recordWrites: [Task<Void, Never>] = []
        let remembers = inputs != nil && options.cache != nil && !Self.namesSharesOfOtherZones(recipe)
        if remembers, kept == nil, let cache = options.cache {
            let contents = Self.declarationDigests(of: recipe.zones)
            digests = contents
            let directory = PlanMemo.recordsDirectory(of: cache.file)
            for zone in recipe.zones {
                guard let content = contents[zone.name] else { continue }
                recordWrites.append(
                    DeclaredRecordFile.startWriting(zone.records, directory: directory, digest: content))
            }
        }
        // The parts to plan, each a recipe of one owner with its options.
        var planned: [(recipe: Recipe, users: UserDirectory, options: PlanOptions)] = []
        // `--target` addresses go to the part of their zone's owner; the rest (public records, subscriptions,
        // what names no zone of the recipe) to the recipe's owner, whose part says what names nothing.
        var targets: [String: [String]] = [:]
        for text in options.targets {
            let target = try PlanTarget(parsing: text)
            let zone = String(target.path.split(separator: "/", maxSplits: 1).first ?? "")
            let handle =
                target.kind == .subscription || recipe.zone(zone) == nil ? recipe.owner : recipe.owner(ofZone: zone)
            targets[handle, default: []].append(text)
        }
        // A store that acts only as users signed in (cloudkit:) writes the zones of the owners it holds a sign-in
        // of; every other owner's zones wait for that owner to sign in.
        let actsAsOwners = store.capabilities.actsAsAnyUser
        var waiting: [String] = []
        for handle in recipe.owners {
            if !actsAsOwners, handle != users.ownerHandle,
                await !store.canActAs(email: recipe.user(handle)?.email ?? "")
            {
                for zone in recipe.zones where recipe.owner(of: zone) == handle {
                    waiting.append(
                        "zone \(zone.name): waiting for \(handle), its owner, to sign in (`sharelane login --as "
                            + "\(handle)`): \(store.displayName) acts only as the users signed in (\(users.ownerHandle))"
                    )
                }
                continue
            }
            var partOptions = options
            partOptions.cache = options.cache.map { $0.forOwner(handle, of: recipe) }
            let part = Self.part(of: recipe, ownedBy: handle)
            // `--zone` and `--target` name things of every owner: each part plans its own, and a part they
            // name nothing of is not planned (with `--zone`, the recipe's owner's part always is: it holds the
            // schema).
            if handle != recipe.owner, !options.onlyZones.isEmpty,
                !part.zones.contains(where: { options.onlyZones.contains($0.name) })
            {
                continue
            }
            if !options.targets.isEmpty {
                guard let named = targets[handle] else { continue }
                partOptions.targets = named
            }
            planned.append((part, users.owned(by: handle), partOptions))
        }
        // Every part at once, as one owner's zones are read at once: each reads its owner's own database.
        var results = [Result<Plan, any Error>?](repeating: nil, count: planned.count)
        let toPlan = planned
        let kept = digests
        await BoundedTasks.run(Array(toPlan.indices), limit: parallelism) { [self, toPlan] index in
            await BoundedTasks.result {
                try await self.plan(
                    toPlan[index].recipe, users: toPlan[index].users, options: toPlan[index].options, inputs: nil,
                    kept: kept)
            }
        } receive: { index, result in
            results[index] = result
        }
        for task in recordWrites { await task.value }
        for result in results {
            if let result { parts.append(try result.get()) }
        }
        if parts.isEmpty {
            // Everything named is another owner's, whom this store cannot act as: a plan of nothing.
            var nothing = Self.part(of: recipe, ownedBy: users.ownerHandle)
            nothing.zones = []
            nothing.publicRecords = []
            nothing.generatedPublicRecords = []
            nothing.subscriptions = []
            var none = options
            none.targets = []
            parts.append(try await plan(nothing, users: users, options: none))
        }
        var plan = Plan(joining: parts, recipe: recipe)
        if !options.destroy { plan.notes += await zonesHeldByOthers(parts, recipe: recipe) }
        plan.waiting += waiting
        if remembers, let inputs, let kept, let cache = options.cache {
            rememberOwners(
                recipe, inputs: inputs, contents: kept, users: users, options: options, cache: cache, plan: &plan)
        }
        return plan
    }

    /// A note for each zone the recipe puts in one owner's database that another owner's part found in theirs
    /// too: a zone given to another owner (`owner:` added or changed) is created in the new owner's database,
    /// and the former owner's copy, which the recipe no longer declares, is kept, as a zone taken out of a
    /// recipe is.
    func zonesHeldByOthers(_ parts: [Plan], recipe: Recipe) async -> [String] {
        var notes: [String] = []
        for part in parts {
            var listed = part.listedZones.names
            if listed == nil, !part.owner.recordName.isEmpty {
                // A part that read no zone (the recipe's owner, who may own none) lists them here. The note is
                // for the reader only: a listing the store refuses leaves it out, and the plan stands.
                listed = (try? await store.listZones(in: .private, as: part.owner.recordName))
                    .map { Set($0.map(\.zoneID.zoneName)) }
            }
            guard let listed else { continue }
            let handle = part.owner.handle
            for zone in recipe.zones where listed.contains(zone.name) && recipe.owner(of: zone) != handle {
                notes.append(
                    "\(handle)'s private database also holds a zone \(zone.name), which the recipe puts in "
                        + "\(recipe.owner(of: zone))'s: it is left as it is, with its records and shares. To delete "
                        + "it, apply a recipe of \(handle)'s that declares \(zone.name) with `absent: true`.")
            }
        }
        return notes
    }

    /// Each zone's declaration digest (`PlanMemo.contents(of:)`), by zone name, digested on every core.
    static func declarationDigests(of zones: [DeclaredZone]) -> [String: String] {
        let parts = OnEveryCore.parts(of: zones.count, atLeast: OnEveryCore.zonesPerPart)
        let digested = OnEveryCore.map(parts.count) { part in
            parts[part].map { (zones[$0].name, PlanMemo.contents(of: zones[$0]).content) }
        }
        return Dictionary(digested.joined().map { $0 }, uniquingKeysWith: { a, _ in a })
    }

    /// Remembers the whole recipe of several owners in the recipe owner's cache file, after that owner's part
    /// wrote its zones there: the next command takes it from the file with every zone's records from beside
    /// it (`Planner.recipeFromCache`) and plans the parts from their files, without loading the recipe, as a
    /// recipe of one owner is. The apply writes it again with the users as they are then (`Plan.afterApply`).
    private func rememberOwners(
        _ recipe: Recipe, inputs: RecipeInputs, contents: [String: String], users: UserDirectory,
        options: PlanOptions, cache: PlanCache, plan: inout Plan
    ) {
        var remember = RememberedRecipe(
            recipe: recipe, inputs: inputs, users: users,
            options: PlanMemo.optionsKey(
                prune: options.prune, destroy: options.destroy, actsAsAnyUser: store.capabilities.actsAsAnyUser),
            digests: [:])
        remember.contents = contents
        DeclaredRecordFile.removeAll(
            in: PlanMemo.recordsDirectory(of: cache.file), except: Set(contents.values))
        var memo =
            PlanMemo.load(cache.file).flatMap { $0.storeName == store.displayName ? $0 : nil }
            ?? PlanMemo(storeName: store.displayName, owner: "")
        memo.recipe = remember
        memo.save(to: cache.file)
        if var cache = plan.afterApply[recipe.owner] as? CacheAfterApply {
            cache.remember = remember
            plan.afterApply[recipe.owner] = cache
        }
    }

    /// The recipe of one owner's part: that owner's zones, and, for the recipe's owner, the public records,
    /// the schema and the subscriptions.
    static func part(of recipe: Recipe, ownedBy handle: String) -> Recipe {
        var part = recipe
        part.owner = handle
        part.zones = recipe.zones.compactMap { zone in
            guard recipe.owner(of: zone) == handle else { return nil }
            var zone = zone
            zone.owner = nil
            zone.ownerLocation = nil
            return zone
        }
        if handle != recipe.owner {
            part.publicRecords = []
            part.generatedPublicRecords = []
            part.schema = RecipeSchema()
            part.subscriptions = []
        }
        return part
    }
}

extension PlanCache {
    /// The cache file of one owner's part of a recipe with several owners: the recipe's owner keeps the
    /// recipe's file, each other owner a file beside it.
    func forOwner(_ handle: String, of recipe: Recipe) -> PlanCache {
        guard handle != recipe.owner else { return self }
        let base = file.deletingPathExtension().lastPathComponent
        // The digest's hex digits: a handle may hold characters a file name should not.
        let digest = FNV1a64.checksum(of: Array(handle.utf8)).split(separator: ":").last.map(String.init) ?? ""
        var cache = self
        cache.file = file.deletingLastPathComponent().appendingPathComponent("\(base)-owner-\(digest).json")
        return cache
    }
}

extension UserDirectory {
    /// The same users, with `handle` as the owner.
    func owned(by handle: String) -> UserDirectory { UserDirectory(entries: entries, ownerHandle: handle) }
}

extension Plan {
    /// The plans of each owner's part joined into one: the first part's owner is the plan's owner, and the
    /// zones of every other part are listed in `zoneOwners`.
    init(joining parts: [Plan], recipe: Recipe) {
        var plan = parts[0]
        guard parts.count > 1 else {
            self = plan
            return
        }
        var zoneOwners: [String: String] = [:]
        for part in parts.dropFirst() {
            for zone in part.basis.zones { zoneOwners[zone.zoneName] = part.owner.handle }
            for change in part.changes where change.kind != .subscription && change.database == .private {
                zoneOwners[change.zoneName] = part.owner.handle
            }
            plan.changes += part.changes
            plan.notes += part.notes.filter { !plan.notes.contains($0) }
            plan.waiting += part.waiting
            plan.basis.zones += part.basis.zones
            if let files = part.assetFiles { plan.assetFiles = (plan.assetFiles ?? [:]).merging(files) { a, _ in a } }
            if let names = part.generatedNames {
                plan.generatedNames = (plan.generatedNames ?? [:]).merging(names) { a, _ in a }
            }
            if let access = part.access, let joined = plan.access {
                plan.access = PlanAccess(
                    before: joined.before.joining(access.before), after: joined.after.joining(access.after))
            }
            plan.afterApply = plan.afterApply.merging(part.afterApply)
        }
        // Zones of other owners the recipe declares but no part read (`--zone` left them out).
        for zone in recipe.zones where zone.owner != nil && zoneOwners[zone.name] == nil {
            zoneOwners[zone.name] = recipe.owner(of: zone)
        }
        plan.zoneOwners = zoneOwners
        // Each owner's changes together, in the parts' order: a subscription on another owner's zone, planned
        // with the recipe owner's subscriptions, goes with that owner's changes.
        var byOwner: [String: [PlannedChange]] = [:]
        for change in plan.changes { byOwner[plan.owner(of: change), default: []].append(change) }
        let order = parts.map(\.owner.handle)
        plan.changes =
            order.flatMap { byOwner[$0] ?? [] }
            + byOwner.keys.filter { !order.contains($0) }.sorted().flatMap { byOwner[$0] ?? [] }
        self = plan
    }
}

extension SharingSnapshot {
    /// Both snapshots' users (each once) and shares.
    func joining(_ other: SharingSnapshot) -> SharingSnapshot {
        var seen = Set(users.map(\.recordName))
        var users = self.users
        for user in other.users where seen.insert(user.recordName).inserted { users.append(user) }
        return SharingSnapshot(users: users, shares: shares + other.shares)
    }
}
