import Applier
import CloudKitWire
import Foundation
import Planner
import Recipe
import ShareKit
import Testing

/// What keeps an apply over `http:` fast, counted rather than timed: it sends its record writes in full
/// `records/modify` requests of 200 operations, so more records cost ⌈operations/200⌉ requests and nothing
/// more per record; and a plan that finds nothing to do reads each zone in pages of 200 records.
@Suite(.serialized)
struct HTTPApplyRequestTests {
    /// One zone shared zone-wide with two users, holding `count` generated records.
    static func recipe(count: Int) throws -> Recipe {
        let yaml = """
            sharelane: 1
            name: requests-\(count)
            users:
              alice: { email: alice@example.com }
              bob: { email: bob@example.com }
              carol: { email: carol@example.com }
            owner: alice
            zones:
              Bulk:
                share:
                  participants:
                    bob: read-write
                    carol: read-only
                records:
                  "item-{{i:04}}":
                    repeat: \(count)
                    type: Item
                    fields: { title: "Item {{i}}", note: "{{fake.sentence}}", qty: 3 }
            """
        return try RecipeLoader(environment: [:]).load(yaml: yaml, file: "requests.yaml")
    }

    struct Counts {
        var operations: Int
        var applyRequests: Int
        var noopPlanRequests: Int
    }

    static func measure(count: Int) async throws -> Counts {
        let recipe = try Self.recipe(count: count)
        return try await EmulatorHarness.withEmulator { base in
            let store = EmulatorHarness.store(base)
            let planner = Planner(store: store, logger: EmulatorHarness.quiet)
            let plan = try await planner.plan(recipe)
            // One operation per record, one for the share (its participants travel inside it).
            let operations = plan.changes.filter { $0.kind == .record || $0.kind == .share }.count
            let before = store.requestCount
            let report = try await Applier(store: store, logger: EmulatorHarness.quiet).apply(plan)
            #expect(report.failures == [])
            let applyRequests = store.requestCount - before
            let beforePlan = store.requestCount
            #expect(try await planner.plan(recipe).changes == [])
            return Counts(
                operations: operations, applyRequests: applyRequests,
                noopPlanRequests: store.requestCount - beforePlan)
        }
    }

    static func batches(_ operations: Int) -> Int { (operations + 199) / 200 }

    @Test(
        "over http: an apply sends ⌈operations/200⌉ records/modify requests plus a constant; a no-op plan reads pages of 200"
    )
    func requestsGrowOnlyWithFullBatches() async throws {
        let small = try await Self.measure(count: 150)
        let large = try await Self.measure(count: 950)
        #expect(small.operations == 151)
        #expect(large.operations == 951)
        // The constant (sign-ins, the zone's creation, the acceptances) is the same for both sizes.
        let constant = small.applyRequests - Self.batches(small.operations)
        #expect(large.applyRequests - Self.batches(large.operations) == constant)
        #expect(constant >= 0 && constant <= 10)
        // 951 records and share are 5 pages of changes, 151 are 1: four more requests, whatever else it asks.
        #expect(large.noopPlanRequests - small.noopPlanRequests == Self.batches(951) - Self.batches(151))
    }
}
