import Applier
import CloudKitWire
import Foundation
import Planner
import Recipe
import ShareKit
import Testing

/// A server that is not there is reported in seconds, after a few bounded attempts, and an apply stops at the
/// first call it cannot send.
@Suite(.serialized) struct DeadServerTests {
    typealias H = EmulatorHarness

    @Test("a refused connection is tried a few times within the reach timeout, then reported with what to do")
    func refusedConnectionsFailFast() async throws {
        let store = WebServicesStore(
            endpoint: .emulator(
                url: "http://127.0.0.1:1", apiToken: "t", container: H.container, environment: H.environment),
            reachTimeout: 1, logger: H.quiet)
        await #expect {
            _ = try await store.signIn(email: "alice@example.com", name: nil)
        } throws: { error in
            let text = "\(error)"
            return (error as? ShareError)?.code == .tryAgainLater && text.contains("cannot reach http://127.0.0.1:1")
                && text.contains("--timeout") && text.contains("sharelane serve")
        }
        // 0.25 s, then 0.5 s between attempts: a fourth would start after the 1 s budget (fewer when the
        // machine is slow: the bound is what a dead server costs at most).
        #expect((1...3).contains(store.requestCount), "\(store.requestCount) attempts")
    }

    @Test("an apply to a server that went away stops at the first call it cannot send; the rest is not attempted")
    func applyStopsAtTheFirstUnsendableBatch() async throws {
        var yaml = """
            sharelane: 1
            name: dead
            users: { alice: { email: alice@example.com } }
            zones:
            """
        for zone in ["A", "B", "C", "D"] {
            yaml +=
                "\n  \(zone):\n    records:\n      \"r-{{i}}\": { repeat: 450, type: Note, fields: { n: \"{{i}}\" } }"
        }
        let recipe = try RecipeLoader(environment: [:]).load(yaml: yaml, file: "dead.yaml")
        let (store, plan) = try await H.withEmulator { base in
            let store = WebServicesStore(
                endpoint: .emulator(
                    url: base, apiToken: H.apiToken, container: H.container, environment: H.environment),
                reachTimeout: 0.5, logger: H.quiet)
            // The zones exist; the plan writes their records, three batches a zone.
            _ = try await store.signIn(email: "alice@example.com", name: nil)
            let alice = try #require(try await store.signInExisting(email: "alice@example.com"))
            _ = try await store.modifyZones(
                ["A", "B", "C", "D"].map { ZoneOperation(.create, ZoneID(zoneName: $0)) }, in: .private,
                as: alice.recordName)
            let plan = try await Planner(store: store, logger: H.quiet).plan(recipe)
            return (store, plan)
        }
        #expect(plan.summary.add == 1800)
        let before = store.requestCount
        let report = try await Applier(store: store, logger: H.quiet).apply(plan)
        let sent = store.requestCount - before
        #expect(report.stopped != nil)
        #expect(report.applied.isEmpty)
        // At most the first batch of each of the three zones in flight, each tried for 0.5 s (two attempts):
        // no later batch and no fourth zone.
        #expect(sent <= 6, "\(sent) requests")
        #expect(report.notAttempted >= 1800 - 3 * 200, "\(report.notAttempted)")
        #expect(
            report.line.hasPrefix(
                "Apply stopped: the store could not be reached; 0 of 1800 changes were applied before it"))
        #expect(report.failureLines().count <= 21)
    }
}
