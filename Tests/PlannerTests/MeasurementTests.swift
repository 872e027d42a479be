import Applier
import Foundation
import PlanModel
import SharelaneTestSupport
import Planner
import ShareKit
import ShareStoreSQLite
import Testing

/// Numbers for the report: store calls and times of a 10,000-record plan and apply on a SQLite file.
/// Run with `SHARELANE_MEASURE=1 swift test --filter MeasurementTests`; skipped otherwise (it takes a while).
@Suite("Measurements", .enabled(if: ProcessInfo.processInfo.environment["SHARELANE_MEASURE"] == "1"))
struct MeasurementTests {
    @Test("10,000 records: apply, then a no-op plan, with store calls counted")
    func tenThousand() async throws {
        let scratch = try TemporaryDirectory("measure")
        let directory = scratch.url
        let store = CountingStore(
            try SQLiteStore(path: directory.appendingPathComponent("s.sqlite").path, logger: quietLogger))
        let recipe = SampleRecipes.generated(count: 10_000)
        let planner = Planner(store: store, logger: quietLogger)
        let clock = ContinuousClock()
        var plan: Plan? = nil
        let firstPlan = try await clock.measure { plan = try await planner.plan(recipe) }
        let firstPlanCalls = store.totalCalls
        store.resetCounts()
        var report: ApplyReport? = nil
        let apply = try await clock.measure {
            report = try await Applier(store: store, logger: quietLogger).apply(try #require(plan))
        }
        let applyCalls = store.calls
        store.resetCounts()
        var again: Plan? = nil
        let noOp = try await clock.measure { again = try await planner.plan(recipe) }
        let noOpCalls = store.calls
        #expect(report?.succeeded == true)
        #expect(again?.changes == [])
        print("MEASURE first plan (10,000 to add): \(firstPlan), \(firstPlanCalls) store calls")
        print("MEASURE apply: \(apply), store calls \(applyCalls)")
        print("MEASURE no-op plan: \(noOp), store calls \(noOpCalls)")
    }
}
