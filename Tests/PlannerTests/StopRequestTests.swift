import Applier
import Foundation
import PlanModel
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite
import Testing

/// An apply asked to stop (`StopRequest`, what a first Ctrl-C does): nothing new starts, the report says what
/// was and was not applied, and the next apply converges (Docs/Plans.md, "Stopping an apply").
@Suite("An apply asked to stop")
struct StopRequestTests {
    /// Applies `plan`, asking it to stop at the first progress report whose message `when` accepts.
    static func apply(_ plan: Plan, store: SQLiteStore, stoppingWhen when: @escaping @Sendable (String) -> Bool)
        async throws -> ApplyReport
    {
        let stop = StopRequest()
        return try await StopRequest.$current.withValue(stop) {
            try await Applier(store: store, logger: quietLogger).apply(plan) { progress in
                if when(progress.message) { stop.request() }
            }
        }
    }

    @Test(
        "asked to stop once its records are written: Dana, whose share was saved but who has not accepted it, is not attempted, nor the public record; the next apply converges"
    )
    func stoppedBeforeTheAcceptances() async throws {
        let store = try freshStore()
        let recipe = SampleRecipes.family()
        let planner = Planner(store: store, logger: quietLogger)
        let plan = try await planner.plan(recipe)
        let report = try await Self.apply(plan, store: store) { $0.hasPrefix("wrote ") }
        #expect(report.stopped == StopRequest.reason)
        #expect(report.line.hasPrefix("Apply stopped: it was asked to stop; "), "\(report.line)")
        // Nothing failed: what was not done was not attempted.
        #expect(report.failures.allSatisfy { $0.reason == ApplyReport.notAttemptedReason }, "\(report.failures)")
        let notAttempted = Set(report.failures.map(\.address))
        #expect(notAttempted.contains("participant FamilyLists/dana"), "\(report.failures)")
        #expect(notAttempted.contains("record (public)/alice-card"), "\(report.failures)")
        #expect(!report.applied.isEmpty)

        // The store holds Dana invited, not accepted: the next plan says so, and its apply converges.
        let next = try await planner.plan(recipe)
        #expect(
            next.changes.map(\.address).contains("participant FamilyLists/dana"), "\(TextPlanRenderer().render(next))")
        let finished = try await Applier(store: store, logger: quietLogger).apply(next)
        #expect(finished.succeeded, "\(finished.failures)")
        #expect(try await planner.plan(recipe).changes == [])
    }

    @Test("asked to stop before its first write: nothing is written, every change is not attempted")
    func stoppedAtOnce() async throws {
        let store = try freshStore()
        let recipe = SampleRecipes.family()
        let planner = Planner(store: store, logger: quietLogger)
        let plan = try await planner.plan(recipe)
        let stop = StopRequest()
        stop.request()
        let report = try await StopRequest.$current.withValue(stop) {
            try await Applier(store: store, logger: quietLogger).apply(plan)
        }
        #expect(report.applied.isEmpty, "\(report.applied)")
        #expect(report.notAttempted == plan.changes.count)
        #expect(report.stopped == StopRequest.reason)
        #expect(try await planner.plan(recipe).changes.count == plan.changes.count)
    }

    @Test("a stop asked for after the last write changes nothing of the report: the apply completed")
    func stoppedAfterTheEnd() async throws {
        let store = try freshStore()
        let recipe = SampleRecipes.family()
        let plan = try await Planner(store: store, logger: quietLogger).plan(recipe)
        let report = try await Self.apply(plan, store: store) { $0.hasSuffix("in the public database") }
        #expect(report.succeeded)
        #expect(report.stopped == nil)
        #expect(report.line == "Apply complete! Resources: 14 added, 0 changed, 0 destroyed.")
    }
}
