import Applier
import Foundation
import PlanModel
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport
import Testing

/// An apply leaves the plan's cache file as the store holds it after its writes: the next plan
/// reads only the change feed, and still finds what anyone else wrote, before, during or after the apply.
@Suite("The cache after an apply")
struct ApplyKeepsCacheTests {
    let scratch: TemporaryDirectory
    let cache: PlanCache
    let path: String
    let loads = IncrementalPlanTests.LoadCounter()

    init() throws {
        scratch = try TemporaryDirectory("apply-cache")
        cache = PlanCache(file: scratch.url.appendingPathComponent("plan.json"))
        path = scratch.file("generated.yaml")
        try IncrementalPlanTests.generatedFile.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Plans the file with the cache and applies the plan, as `sharelane apply` does.
    func apply(_ store: any Store) async throws {
        let plan = try await IncrementalPlanTests.planFile(path, store, cache: cache, loads: loads)
        let report = try await PlanAndApply(store: store, logger: quietLogger).apply(plan)
        #expect(report.failures == [], "\(report.failures)")
    }

    /// The next plan of the file, through a counting store, and the full plan it must equal.
    func planAgain(_ base: SQLiteStore) async throws -> (plan: Plan, calls: [String: Int]) {
        let store = CountingStore(base)
        let plan = try await IncrementalPlanTests.planFile(path, store, cache: cache, loads: loads)
        let recipe = try RecipeLoader(environment: [:]).load(path: path)
        IncrementalPlanTests.expectSame(plan, try await IncrementalPlanTests.plan(recipe, base, cache: nil))
        return (plan, store.calls)
    }

    func alice(_ store: SQLiteStore) async throws -> UserRecordName {
        try #require(try await store.signInExisting(email: "alice@example.com")).recordName
    }

    static func setQuantity(
        _ quantity: Int64, of names: [String], in zone: String, on store: SQLiteStore, as user: UserRecordName
    )
        async throws
    {
        let zoneID = ZoneID(zoneName: zone)
        let outcomes = try await store.modifyRecords(
            names.map {
                RecordOperation(
                    .forceUpdate,
                    Record(recordName: $0, recordType: "Item", zoneID: zoneID, fields: ["qty": .int64(quantity)]))
            }, in: zoneID, database: .private, atomic: true, as: user)
        #expect(outcomes.allSatisfy { $0.error == nil }, "\(outcomes)")
    }

    @Test("after the first apply to a new store, which creates the users, the plan reads only the change feed")
    func firstApplyLeavesTheCache() async throws {
        let store = try freshStore()
        try await apply(store)
        let (plan, calls) = try await planAgain(store)
        #expect(plan.isEmpty)
        #expect(loads.count == 0, "the file is not loaded again")
        #expect(calls["zoneChanges"] == nil && calls["zoneTags"] == nil, "no zone is read: \(calls)")
        #expect(calls["databaseChanges"] == 1, "\(calls)")
    }

    @Test(
        "the applier alone makes the plan's changes and reads nothing back: the cache file stays as the plan left it")
    func theApplierLeavesTheCacheAlone() async throws {
        let store = CountingStore(try freshStore())
        let plan = try await IncrementalPlanTests.planFile(path, store, cache: cache, loads: loads)
        let planned = (file: try Data(contentsOf: cache.file), calls: store.calls)
        let report = try await Applier(store: store, logger: quietLogger).apply(plan)
        #expect(report.failures == [], "\(report.failures)")
        #expect(store.calls["zoneTags"] == planned.calls["zoneTags"], "\(store.calls)")
        #expect(store.calls["databaseChanges"] == planned.calls["databaseChanges"], "\(store.calls)")
        #expect(try Data(contentsOf: cache.file) == planned.file)
    }

    @Test("after an apply that updates one zone, the plan reads neither zone, and a later change is found alone")
    func anUpdateLeavesTheCache() async throws {
        let store = try freshStore()
        try await apply(store)
        _ = try await planAgain(store)
        // The recipe now says qty 2 in Archive: 500 updates there, none in Stock (which the file remembers).
        try IncrementalPlanTests.generatedFile.replacingOccurrences(of: "qty: 1", with: "qty: 2")
            .write(toFile: path, atomically: true, encoding: .utf8)
        try await apply(store)
        let (quiet, calls) = try await planAgain(store)
        #expect(quiet.isEmpty)
        #expect(calls["zoneChanges"] == nil, "\(calls)")
        // Someone changes a record of Archive afterwards: only its changes are read, and the plan shows it.
        try await Self.setQuantity(7, of: ["old-0003"], in: "Archive", on: store, as: try await alice(store))
        let (changed, after) = try await planAgain(store)
        #expect(changed.changes.map(\.address) == ["record Archive/old-0003"])
        #expect(after["zoneChanges"] == 1, "\(after)")
    }

    @Test(
        "a write to a zone the apply wrote, between its writes and its reading of the zone, is found by the next plan")
    func aWriteDuringTheApplyIsFound() async throws {
        let base = try freshStore()
        let store = CountingStore(base)
        // Just before the apply reads the zones' tags, alice writes to both zones.
        store.before("zoneTags") {
            let alice = try #require(try await base.signInExisting(email: "alice@example.com")).recordName
            try await Self.setQuantity(8, of: ["old-0010"], in: "Archive", on: base, as: alice)
            try await Self.setQuantity(8, of: ["item-0020"], in: "Stock", on: base, as: alice)
        }
        try await apply(store)
        #expect(store.calls["zoneTags"] == 1, "one call for both zones: \(store.calls)")
        let (plan, _) = try await planAgain(base)
        #expect(plan.changes.map(\.address) == ["record Stock/item-0020", "record Archive/old-0010"])
    }

    @Test("a write to a zone the file remembers, made while the apply writes another zone, is found by the next plan")
    func aWriteToARememberedZoneIsFound() async throws {
        let base = try freshStore()
        try await apply(base)
        _ = try await planAgain(base)
        try IncrementalPlanTests.generatedFile.replacingOccurrences(of: "qty: 1", with: "qty: 2")
            .write(toFile: path, atomically: true, encoding: .utf8)
        let store = CountingStore(base)
        let plan = try await IncrementalPlanTests.planFile(path, store, cache: cache, loads: loads)
        #expect(Set(plan.changes.map(\.zoneName)) == ["Archive"], "Stock is remembered, and unchanged")
        // Just before the apply asks which zones changed since the plan, alice writes to Stock.
        store.before("databaseChanges") {
            try await Self.setQuantity(9, of: ["item-0030"], in: "Stock", on: base, as: try await alice(base))
        }
        let report = try await PlanAndApply(store: store, logger: quietLogger).apply(plan)
        #expect(report.failures == [])
        let (after, _) = try await planAgain(base)
        #expect(after.changes.map(\.address) == ["record Stock/item-0030"])
    }

    @Test("a failed change leaves its zone to the next plan, which shows what is left")
    func aFailedChangeLeavesItsZone() async throws {
        let base = try freshStore()
        try await apply(base)
        _ = try await planAgain(base)
        try IncrementalPlanTests.generatedFile.replacingOccurrences(of: "qty: 1", with: "qty: 2")
            .write(toFile: path, atomically: true, encoding: .utf8)
        let plan = try await IncrementalPlanTests.planFile(path, base, cache: cache, loads: loads)
        // Alice changes one planned record first: its update fails on the stale change tag.
        try await Self.setQuantity(5, of: ["old-0001"], in: "Archive", on: base, as: try await alice(base))
        let report = try await PlanAndApply(store: base, logger: quietLogger).apply(plan)
        #expect(report.failures.map(\.address) == ["record Archive/old-0001"])
        let (after, calls) = try await planAgain(base)
        #expect(after.changes.map(\.address) == ["record Archive/old-0001"])
        #expect(calls["zoneChanges"] == 1, "Archive is read, Stock is not: \(calls)")
    }
}
