import Applier
import CloudKitWire
import Foundation
import PlanModel
import Planner
import Recipe
import ShareKit
import SharelaneTestSupport
import ShareStoreSQLite
import Testing

/// Applying a 10,000-record recipe through `http:` against the SQLite store: HTTP requests and time.
///
/// Opt-in (it takes a while in a debug build): `SHARELANE_BENCH=1 swift test --filter HTTPBenchmarkTests`.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["SHARELANE_BENCH"] == "1"))
struct HTTPBenchmarkTests {
    static let count = Int(ProcessInfo.processInfo.environment["SHARELANE_BENCH_RECORDS"] ?? "") ?? 10_000

    static var recipeYAML: String {
        """
        sharelane: 1
        name: bench
        users:
          alice: { email: alice@example.com, name: Alice Appleseed }
          bob: { email: bob@example.com }
        owner: alice
        zones:
          Bulk:
            share:
              participants:
                bob: read-write
            records:
              "item-{{i:05}}":
                repeat: \(count)
                type: Item
                fields: { title: "Item {{i}}", note: "{{fake.sentence}}", qty: 3 }
        """
    }

    struct Timing: CustomStringConvertible {
        var plan: Duration
        var apply: Duration
        var replan: Duration
        var planRequests = 0
        var applyRequests = 0
        var replanRequests = 0

        var description: String {
            "plan \(plan) (\(planRequests) requests), apply \(apply) (\(applyRequests) requests), "
                + "second plan \(replan) (\(replanRequests) requests)"
        }
    }

    static func measure(_ recipe: Recipe, on store: any Store, requests: @Sendable () -> Int) async throws -> Timing {
        let clock = ContinuousClock()
        let planner = Planner(store: store, logger: EmulatorHarness.quiet)
        var start = requests()
        var plan: Plan?
        let planTime = try await clock.measure { plan = try await planner.plan(recipe) }
        let planRequests = requests() - start
        start = requests()
        var report: ApplyReport?
        let applyTime = try await clock.measure {
            if let plan { report = try await Applier(store: store, logger: EmulatorHarness.quiet).apply(plan) }
        }
        let applyRequests = requests() - start
        #expect(report?.failures == [])
        start = requests()
        var again: Plan?
        let replanTime = try await clock.measure { again = try await planner.plan(recipe) }
        #expect(again?.changes == [])
        return Timing(
            plan: planTime, apply: applyTime, replan: replanTime, planRequests: planRequests,
            applyRequests: applyRequests, replanRequests: requests() - start)
    }

    @Test func tenThousandRecordsOverHTTPAndOnSQLite() async throws {
        let recipe = try RecipeLoader(environment: [:]).load(yaml: Self.recipeYAML, file: "bench.yaml")
        let scratch = try TemporaryDirectory("local")
        let local = try SQLiteStore(path: scratch.file("local.sqlite"), logger: EmulatorHarness.quiet)
        let sqlite = try await Self.measure(recipe, on: local, requests: { 0 })
        let http = try await EmulatorHarness.withEmulator { base in
            let store = EmulatorHarness.store(base)
            return try await Self.measure(recipe, on: store, requests: { store.requestCount })
        }
        print("BENCH \(Self.count) records, sqlite: \(sqlite)")
        print("BENCH \(Self.count) records, http:   \(http)")
    }
}
