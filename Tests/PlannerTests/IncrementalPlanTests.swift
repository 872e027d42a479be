import Applier
import Foundation
import PlanModel
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport
import Testing

/// Incremental plans: a plan reads only what changed since the last plan, finds what changed
/// behind its back, and is always the plan a full read gives.
@Suite("Incremental plans")
struct IncrementalPlanTests {
    let scratch: TemporaryDirectory
    let cache: PlanCache

    init() throws {
        scratch = try TemporaryDirectory("plan-cache")
        cache = PlanCache(file: scratch.url.appendingPathComponent("plan.json"))
    }

    static func plan(_ recipe: Recipe, _ store: any Store, cache: PlanCache?) async throws -> Plan {
        try await Planner(store: store, logger: quietLogger).plan(recipe, options: PlanOptions(cache: cache))
    }

    /// The plan a full read gives, and the incremental one: the same in every part a user sees or apply uses.
    static func expectSame(_ incremental: Plan, _ full: Plan, sourceLocation: Testing.SourceLocation = #_sourceLocation)
    {
        #expect(incremental.changes == full.changes, sourceLocation: sourceLocation)
        #expect(incremental.notes == full.notes, sourceLocation: sourceLocation)
        #expect(incremental.waiting == full.waiting, sourceLocation: sourceLocation)
        #expect(incremental.basis == full.basis, sourceLocation: sourceLocation)
        #expect(incremental.access == full.access, sourceLocation: sourceLocation)
    }

    @Test("an incremental no-op plan of 1,000 records reads only the change feed and the zone list")
    func noOpPlanReadsOnlyTheFeed() async throws {
        let base = try freshStore()
        let recipe = SampleRecipes.generated(count: 1_000)
        try await PromiseTests.apply(recipe, to: base)
        let store = CountingStore(base)
        let first = try await Self.plan(recipe, store, cache: cache)
        #expect(first.isEmpty)
        #expect((store.calls["zoneChanges"] ?? 0) > 0, "the first plan reads the zone: \(store.calls)")
        store.resetCounts()
        let second = try await Self.plan(recipe, store, cache: cache)
        #expect(second.isEmpty)
        #expect(store.calls["zoneChanges"] == nil, "\(store.calls)")
        #expect(store.calls["databaseChanges"] == 1, "\(store.calls)")
        #expect(store.calls["listZones"] == 1, "\(store.calls)")
        Self.expectSame(second, try await Self.plan(recipe, base, cache: nil))
    }

    @Test("a change behind the plan's back is found, and only its zone is read")
    func aChangeBehindItsBackIsFound() async throws {
        let base = try freshStore()
        let recipe = try PromiseTests.load(PlanAccessTests.first)
        try await PromiseTests.apply(recipe, to: base)
        _ = try await Self.plan(recipe, base, cache: cache)
        // Someone else changes a record of Lists and Bob leaves its share.
        let alice = try #require(try await base.signInExisting(email: "alice@example.com")).recordName
        let bob = try #require(try await base.signInExisting(email: "bob@example.com")).recordName
        _ = try await base.modifyRecords(
            [
                RecordOperation(
                    .forceUpdate,
                    Record(
                        recordName: "groceries", recordType: "TodoList", zoneID: ZoneID(zoneName: "Lists"),
                        fields: ["title": .string("Changed behind its back")]))
            ], in: ZoneID(zoneName: "Lists"), database: .private, atomic: true, as: alice)
        try await base.leaveShare(
            recordName: zoneShareRecordName, in: ZoneID(zoneName: "Lists", ownerRecordName: alice), as: bob)
        let store = CountingStore(base)
        let incremental = try await Self.plan(recipe, store, cache: cache)
        #expect(store.calls["zoneChanges"] == 1, "only Lists is read: \(store.calls)")
        #expect(incremental.changes.map(\.address) == ["record Lists/groceries", "participant Lists/bob"])
        Self.expectSame(incremental, try await Self.plan(recipe, base, cache: nil))
    }

    /// A recipe file of 1,000 generated records in two zones, each shared with Bob.
    static let generatedFile = """
        sharelane: 1
        name: generated
        seed: 3
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
        owner: alice
        zones:
          Stock:
            share: { participants: { bob: read-only } }
            records:
              "item-{{i:04}}": { repeat: 500, type: Item, fields: { title: "Item {{i}}", qty: 3 } }
          Archive:
            records:
              "old-{{i:04}}": { repeat: 500, type: Item, fields: { title: "Old {{i}}", qty: 1 } }
        """

    /// Plans the recipe file as `sharelane plan` does: from the cache file when the file is unchanged since
    /// the last plan (counting the loads `load` makes then), else loaded.
    static func planFile(
        _ path: String, _ store: any Store, cache: PlanCache, loads: LoadCounter
    ) async throws -> Plan {
        let loader = RecipeLoader(environment: [:])
        let planner = Planner(store: store, logger: quietLogger)
        if let unchanged = cache.unchangedRecipe(environment: [:]) {
            return try await planner.plan(unchanged, options: PlanOptions(cache: cache)) {
                loads.count += 1
                return try loader.loadWithInputs(path: path)
            }
        }
        let loaded = try loader.loadWithInputs(path: path)
        return try await planner.plan(loaded.recipe, inputs: loaded.inputs, options: PlanOptions(cache: cache))
    }

    final class LoadCounter: @unchecked Sendable { var count = 0 }

    /// The generated recipe as a file, applied to a fresh store and planned once with the cache.
    func appliedAndPlannedOnce() async throws -> (path: String, recipe: Recipe, store: SQLiteStore, loads: LoadCounter)
    {
        let path = scratch.file("generated.yaml")
        try Self.generatedFile.write(toFile: path, atomically: true, encoding: .utf8)
        let recipe = try RecipeLoader(environment: [:]).load(path: path)
        let store = try freshStore()
        try await PromiseTests.apply(recipe, to: store)
        let loads = LoadCounter()
        _ = try await Self.planFile(path, store, cache: cache, loads: loads)
        return (path, recipe, store, loads)
    }

    @Test("an unchanged recipe file is not loaded again: its no-op plan reads the change feed, and no record")
    func anUnchangedFileIsNotLoaded() async throws {
        let (path, recipe, base, loads) = try await appliedAndPlannedOnce()
        #expect(cache.unchangedRecipe(environment: [:]) != nil, "the cache remembers the file")
        let store = CountingStore(base)
        let second = try await Self.planFile(path, store, cache: cache, loads: loads)
        #expect(second.isEmpty)
        #expect(loads.count == 0)
        #expect(store.calls["zoneChanges"] == nil, "\(store.calls)")
        #expect(store.calls["databaseChanges"] == 1 && store.calls["listZones"] == 1, "\(store.calls)")
        Self.expectSame(second, try await Self.plan(recipe, base, cache: nil))
    }

    @Test("records changed behind an unchanged file's back are read alone and planned, and the next plan is quiet")
    func recordsChangedBehindItsBackAreReadAlone() async throws {
        let (path, recipe, base, loads) = try await appliedAndPlannedOnce()
        // Someone changes two records of Stock and deletes one of Archive.
        let alice = try #require(try await base.signInExisting(email: "alice@example.com")).recordName
        let stock = ZoneID(zoneName: "Stock")
        _ = try await base.modifyRecords(
            ["item-0007", "item-0300"].map {
                RecordOperation(
                    .forceUpdate,
                    Record(recordName: $0, recordType: "Item", zoneID: stock, fields: ["qty": .int64(9)]))
            }, in: stock, database: .private, atomic: true, as: alice)
        let archive = ZoneID(zoneName: "Archive")
        _ = try await base.modifyRecords(
            [RecordOperation(.forceDelete, Record(recordName: "old-0042", recordType: "Item", zoneID: archive))],
            in: archive, database: .private, atomic: true, as: alice)
        let store = CountingStore(base)
        let plan = try await Self.planFile(path, store, cache: cache, loads: loads)
        #expect(loads.count == 0)
        #expect(
            plan.changes.map(\.address) == [
                "record Stock/item-0007", "record Stock/item-0300", "record Archive/old-0042",
            ])
        #expect(store.calls["zoneChanges"] == 2, "each zone's changes, no zone whole: \(store.calls)")
        Self.expectSame(plan, try await Self.plan(recipe, base, cache: nil))
        try await PromiseTests.apply(recipe, to: base)
        let after = try await Self.planFile(path, base, cache: cache, loads: loads)
        #expect(after.isEmpty)
        Self.expectSame(after, try await Self.plan(recipe, base, cache: nil))
    }

    @Test("a plan of a new store keeps its recipe: the next plan and the apply take its records from the cache")
    func aNewStoresPlanKeepsTheRecipe() async throws {
        let path = scratch.file("generated.yaml")
        try Self.generatedFile.write(toFile: path, atomically: true, encoding: .utf8)
        let recipe = try RecipeLoader(environment: [:]).load(path: path)
        let store = try freshStore()
        let loads = LoadCounter()
        let first = try await Self.planFile(path, store, cache: cache, loads: loads)
        #expect(first.summary.add == 1_000 + 2 + 1 + 1, "1,000 records, two zones, a share and bob")
        #expect(cache.unchangedRecipe(environment: [:]) != nil, "the cache remembers the file before the owner exists")
        let second = try await Self.planFile(path, store, cache: cache, loads: loads)
        #expect(loads.count == 0, "the records come from the cache, the file is not loaded")
        Self.expectSame(second, first)
        Self.expectSame(second, try await Self.plan(recipe, store, cache: nil))
        // The apply of that plan leaves the cache as the store holds it: the next plan is quiet, from the cache.
        let report = try await PlanAndApply(store: store, logger: quietLogger).apply(second)
        #expect(report.failures.isEmpty, "\(report.failures)")
        let counting = CountingStore(store)
        let after = try await Self.planFile(path, counting, cache: cache, loads: loads)
        #expect(after.isEmpty)
        #expect(loads.count == 0)
        #expect(counting.calls["zoneChanges"] == nil, "\(counting.calls)")
    }

    @Test("a new store's plan whose kept records are missing loads the file, and plans the same")
    func aMissingRecordFileLoadsTheFile() async throws {
        let path = scratch.file("generated.yaml")
        try Self.generatedFile.write(toFile: path, atomically: true, encoding: .utf8)
        let store = try freshStore()
        let loads = LoadCounter()
        let first = try await Self.planFile(path, store, cache: cache, loads: loads)
        let directory = cache.file.deletingPathExtension().appendingPathExtension("records")
        let kept = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".jsonl") }
        #expect(kept.count == 2, "one file a zone: \(kept)")
        try FileManager.default.removeItem(at: directory.appendingPathComponent(kept[0]))
        let second = try await Self.planFile(path, store, cache: cache, loads: loads)
        #expect(loads.count == 1)
        Self.expectSame(second, first)
    }

    @Test("a recipe of several owners is kept whole: the apply and every plan after take it from the cache file")
    func aRecipeOfSeveralOwnersIsKept() async throws {
        let path = scratch.file("cycle.yaml")
        try SeveralOwnersTests.cycle.write(toFile: path, atomically: true, encoding: .utf8)
        let recipe = try RecipeLoader(environment: [:]).load(path: path)
        let store = try freshStore()
        let loads = LoadCounter()
        let first = try await Self.planFile(path, store, cache: cache, loads: loads)
        #expect(first.summary.add == 13)
        #expect(cache.unchangedRecipe(environment: [:]) != nil, "the recipe owner's file remembers every owner's zones")
        let second = try await Self.planFile(path, store, cache: cache, loads: loads)
        #expect(loads.count == 0, "the records of every owner's zones come from beside the cache file")
        Self.expectSame(second, first)
        #expect(second.zoneOwners == ["Trip": "bob", "Kitchen": "carol"])
        let report = try await PlanAndApply(store: store, logger: quietLogger).apply(second)
        #expect(report.failures.isEmpty, "\(report.failures)")
        #expect(cache.unchangedRecipe(environment: [:]) != nil, "the apply writes the recipe owner's file with it")
        // Each owner's part left its own file as the store holds it: nothing is read but the feeds.
        let counting = CountingStore(store)
        let after = try await Self.planFile(path, counting, cache: cache, loads: loads)
        #expect(after.isEmpty)
        #expect(loads.count == 0)
        #expect(counting.calls["zoneChanges"] == nil, "\(counting.calls)")
        #expect(counting.calls["databaseChanges"] == 3, "one feed an owner: \(counting.calls)")
        Self.expectSame(after, try await Self.plan(recipe, store, cache: nil))
        // Bob renames his trip's record behind the recipe's back: only his zone is read, and put back.
        let bob = try #require(try await store.signInExisting(email: "bob@example.com")).recordName
        let trip = ZoneID(zoneName: "Trip")
        _ = try await store.modifyRecords(
            [
                RecordOperation(
                    .forceUpdate,
                    Record(recordName: "rome", recordType: "Item", zoneID: trip, fields: ["title": .string("Paris")]))
            ], in: trip, database: .private, atomic: true, as: bob)
        counting.resetCounts()
        let changed = try await Self.planFile(path, counting, cache: cache, loads: loads)
        #expect(loads.count == 0)
        #expect(changed.changes.map(\.address) == ["record Trip/rome"])
        #expect(changed.owner(of: changed.changes[0]) == "bob")
        #expect(counting.calls["zoneChanges"] == 1, "Bob's zone alone: \(counting.calls)")
        Self.expectSame(changed, try await Self.plan(recipe, store, cache: nil))
        // An edit of the file loads it again.
        try (SeveralOwnersTests.cycle + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(cache.unchangedRecipe(environment: [:]) == nil)
    }

    @Test("an edited file, or a changed environment variable it uses, is loaded again")
    func anEditedFileIsLoaded() async throws {
        let path = scratch.file("generated.yaml")
        try Self.generatedFile.replacingOccurrences(
            of: "title: \"Old {{i}}\"", with: "title: \"Old ${ARCHIVE_QTY:-1} {{i}}\""
        ).write(
            toFile: path, atomically: true, encoding: .utf8)
        let loader = RecipeLoader(environment: [:])
        let loaded = try loader.loadWithInputs(path: path)
        let store = try freshStore()
        try await PromiseTests.apply(loaded.recipe, to: store)
        _ = try await Planner(store: store, logger: quietLogger).plan(
            loaded.recipe, inputs: loaded.inputs, options: PlanOptions(cache: cache))
        #expect(cache.unchangedRecipe(environment: [:]) != nil)
        #expect(cache.unchangedRecipe(environment: ["ARCHIVE_QTY": "2"]) == nil, "a variable it uses changed")
        #expect(cache.unchangedRecipe(environment: ["UNUSED": "2"]) != nil, "a variable it does not use")
        try (Self.generatedFile + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        #expect(cache.unchangedRecipe(environment: [:]) == nil, "the file changed")
        #expect(PlanCache(file: cache.file, refresh: .full).unchangedRecipe(environment: [:]) == nil)
    }

    @Test("a share URL another zone or a public record names is taken from the cache, and a stopped share is found")
    func shareURLsOfRememberedZones() async throws {
        let store = try freshStore()
        let recipe = SampleRecipes.family()
        try await PromiseTests.apply(recipe, to: store)
        let quiet = try await Self.plan(recipe, store, cache: cache)
        #expect(quiet.isEmpty)
        let again = try await Self.plan(recipe, store, cache: cache)
        Self.expectSame(again, try await Self.plan(recipe, store, cache: nil))
        // The owner stops sharing FamilyLists behind the recipe's back: the public card's URL goes stale.
        let alice = try #require(try await store.signInExisting(email: "alice@example.com")).recordName
        _ = try await store.modifyRecords(
            [
                RecordOperation(
                    .forceDelete,
                    share: Share(recordName: zoneShareRecordName, zoneID: ZoneID(zoneName: "FamilyLists")))
            ], in: ZoneID(zoneName: "FamilyLists"), database: .private, atomic: true, as: alice)
        let incremental = try await Self.plan(recipe, store, cache: cache)
        #expect(incremental.changes.contains { $0.address == "share FamilyLists" && $0.action == .create })
        Self.expectSame(incremental, try await Self.plan(recipe, store, cache: nil))
    }

    @Test("a recipe edit re-reads the zone it edits; --refresh=full reads every zone")
    func editsAndFullRefresh() async throws {
        let base = try freshStore()
        let recipe = try PromiseTests.load(PlanAccessTests.first)
        try await PromiseTests.apply(recipe, to: base)
        _ = try await Self.plan(recipe, base, cache: cache)
        let edited = try PromiseTests.load(
            PlanAccessTests.first.replacingOccurrences(of: "name: Italy", with: "name: Roma"))
        let store = CountingStore(base)
        let plan = try await Self.plan(edited, store, cache: cache)
        #expect(plan.changes.map(\.address) == ["record Trips/italy"])
        #expect(store.calls["zoneChanges"] == 1, "only Trips is read: \(store.calls)")
        store.resetCounts()
        _ = try await Self.plan(edited, store, cache: PlanCache(file: cache.file, refresh: .full))
        #expect(store.calls["zoneChanges"] == 2, "\(store.calls)")
    }

    static let twoSharedZones = """
        sharelane: 1
        name: club
        owner: alice
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
        zones:
          Notices:
            share: { participants: { bob: read-write } }
            records:
              welcome: { type: Note, fields: { title: Welcome } }
          Rota:
            share: { participants: { bob: read-only } }
            records:
              monday: { type: Shift, fields: { who: Alice } }
        """

    @Test("a line added above shared zones leaves them to the cache: only a zone whose declaration changed is read")
    func movedSharesStayCached() async throws {
        let base = try freshStore()
        let recipe = try PromiseTests.load(Self.twoSharedZones)
        try await PromiseTests.apply(recipe, to: base)
        _ = try await Self.plan(recipe, base, cache: cache)
        // A comment above every zone: each share and participant now stands a line lower in the file.
        let moved = try PromiseTests.load(
            Self.twoSharedZones.replacingOccurrences(of: "name: club\n", with: "name: club\n# the club's lists\n"))
        #expect(moved.zones[0].share != recipe.zones[0].share, "the share's place in the file moved")
        let store = CountingStore(base)
        let quiet = try await Self.plan(moved, store, cache: cache)
        #expect(quiet.isEmpty, "\(quiet.changes.map(\.address))")
        #expect(store.calls["zoneChanges"] == nil, "no zone is read: \(store.calls)")
        Self.expectSame(quiet, try await Self.plan(moved, base, cache: nil))

        // Both moved again, and one record of Rota edited: Rota alone is read.
        let edited = try PromiseTests.load(
            Self.twoSharedZones.replacingOccurrences(of: "name: club\n", with: "name: club\n# one\n# two\n")
                .replacingOccurrences(of: "who: Alice", with: "who: Bob"))
        store.resetCounts()
        let plan = try await Self.plan(edited, store, cache: cache)
        #expect(plan.changes.map(\.address) == ["record Rota/monday"])
        #expect(store.calls["zoneChanges"] == 1, "only Rota is read: \(store.calls)")
        Self.expectSame(plan, try await Self.plan(edited, base, cache: nil))
    }

    @Test("after the store is reset, the old token is refused and everything is read again")
    func aResetStoreIsReadWhole() async throws {
        let store = try freshStore()
        let recipe = try PromiseTests.load(PlanAccessTests.first)
        try await PromiseTests.apply(recipe, to: store)
        _ = try await Self.plan(recipe, store, cache: cache)
        try await store.reset()
        try await PromiseTests.apply(
            try PromiseTests.load(PlanAccessTests.first.replacingOccurrences(of: "Old list", with: "Other")), to: store)
        let incremental = try await Self.plan(recipe, store, cache: cache)
        #expect(incremental.changes.map(\.address) == ["record Lists/old"])
        Self.expectSame(incremental, try await Self.plan(recipe, store, cache: nil))
    }

    @Test("a memo of another store or owner is not used")
    func anotherStoresMemoIsNotUsed() async throws {
        let recipe = try PromiseTests.load(PlanAccessTests.first)
        let one = try freshStore()
        try await PromiseTests.apply(recipe, to: one)
        _ = try await Self.plan(recipe, one, cache: cache)
        let other = try SQLiteStore(path: scratch.file("other.sqlite"), logger: quietLogger)
        let plan = try await Self.plan(recipe, other, cache: cache)
        #expect(plan.summary.add > 0)
        Self.expectSame(plan, try await Self.plan(recipe, other, cache: nil))
    }
}
