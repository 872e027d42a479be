import Foundation
import Lanes
import Recipe
import ShareKit
import Testing

/// `before_all`, `after_all` and `error`, as fastlane runs them.
@Suite("Lane hooks")
struct HookTests {
    /// Each hook and step leaves a record in zone Log, so the test sees what ran.
    static let recipe = """
        sharelane: 1
        name: hooks
        users:
          ann: { email: ann@example.com }
        owner: ann
        zones:
          Log: { records: {} }
        before_all:
          - save: { zone: Log, record: before, type: Mark, fields: { n: 1 } }
        after_all:
          - save: { zone: Log, record: after, type: Mark, fields: { n: 3 } }
        error:
          - save: { zone: Log, record: failed, type: Mark, fields: { n: 4 } }
        lanes:
          good:
            steps:
              - save: { zone: Log, record: step, type: Mark, fields: { n: 2 } }
              - expect: { records: 2, zone: Log }
          bad:
            steps:
              - save: { zone: Log, record: step, type: Mark, fields: { n: 2 } }
              - expect: { records: 9, zone: Log }
              - save: { zone: Log, record: never, type: Mark }
        """

    @Test func beforeAllThenStepsThenAfterAll() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        try await harness.createZone("Log", ownerEmail: "ann@example.com")

        let report = try await harness.run("good")

        #expect(report.succeeded, "\(harness.output)")
        #expect(report.steps.map(\.hook) == ["before_all", nil, nil, "after_all"])
        let log = ZoneID(zoneName: "Log")
        for name in ["before", "step", "after"] {
            #expect(try await harness.record(name, zone: log, asEmail: "ann@example.com") != nil, "no record \(name)")
        }
        #expect(try await harness.record("failed", zone: log, asEmail: "ann@example.com") == nil)
        let output = harness.output
        let before = try #require(output.range(of: "▸ before_all"))
        let step = try #require(output.range(of: "✔ save Mark Log/step"))
        let after = try #require(output.range(of: "▸ after_all"))
        #expect(before.lowerBound < step.lowerBound && step.lowerBound < after.lowerBound, "\(output)")
        #expect(output.contains("✔ lane good succeeded: 4 steps"), "\(output)")
    }

    @Test func failureSkipsAfterAllAndRunsErrorHook() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        try await harness.createZone("Log", ownerEmail: "ann@example.com")

        let report = try await harness.run("bad")

        #expect(!report.succeeded)
        #expect(report.steps.map(\.hook) == ["before_all", nil, nil, "error"])
        let log = ZoneID(zoneName: "Log")
        #expect(
            try await harness.record("failed", zone: log, asEmail: "ann@example.com") != nil,
            "the error hook did not run")
        #expect(
            try await harness.record("after", zone: log, asEmail: "ann@example.com") == nil,
            "after_all ran after a failure")
        #expect(
            try await harness.record("never", zone: log, asEmail: "ann@example.com") == nil,
            "the lane went on after a failure")
        #expect(harness.output.contains("▸ error"), "\(harness.output)")
        #expect(!harness.output.contains("▸ after_all"), "\(harness.output)")
    }

    @Test func failingExpectSaysWhatAndWhere() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        try await harness.createZone("Log", ownerEmail: "ann@example.com")

        let report = try await harness.run("bad")

        // `- expect: { records: 9, zone: Log }` is line 22; the action word starts at column 9.
        let failure = try #require(report.failure)
        #expect(failure.location == SourceLocation(file: harness.recipePath, line: 22, column: 9))
        let message =
            "\(harness.recipePath):22:9: error: expectation failed: expected 9 records in Log as ann sees it, found 2"
        #expect(harness.output.contains(message), "\(harness.output)")
        #expect(harness.output.contains("✘ expect ann sees 9 records in Log"), "\(harness.output)")
        #expect(harness.output.contains("✘ lane bad failed at \(harness.recipePath):22:9"), "\(harness.output)")
    }
}
