import Foundation
import SharelaneTestSupport
import Lanes
import Recipe
import ShareKit
import Testing

/// `plan`, `apply` and `export` steps, done by the Planner module.
@Suite("Plan, apply and export steps")
struct PlannerStepTests {
    static func recipe(exportTo path: String) -> String {
        """
        sharelane: 1
        name: snapshot
        users:
          ann: { email: ann@example.com }
          ben: { email: ben@example.com }
        owner: ann
        zones:
          Shelf:
            share:
              participants:
                ben: read-only
            records:
              book: { type: Book, fields: { title: Dune } }
        lanes:
          snapshot:
            steps:
              - apply
              - plan
              - export: { out: "\(path)" }
        """
    }

    @Test func applyThenPlanShowsNoChangesAndExportWritesTheRecipe() async throws {
        let directory = try TemporaryDirectory("lanes-export")
        let out = directory.file("exported.yaml")
        let harness = try LaneHarness(recipe: Self.recipe(exportTo: out))

        let report = try await harness.run("snapshot")

        #expect(report.succeeded, "\(harness.output)")
        #expect(harness.output.contains("✔ apply — Apply complete! Resources: 4 added"), "\(harness.output)")
        #expect(harness.output.contains("    + record Shelf/book"), "\(harness.output)")
        #expect(harness.output.contains("✔ plan — Plan: 0 to add, 0 to change, 0 to destroy."), "\(harness.output)")
        #expect(harness.output.contains("✔ export to \(out) — wrote \(out)"), "\(harness.output)")
        let exported = try String(contentsOfFile: out, encoding: .utf8)
        #expect(exported.contains("Shelf:"), "\(exported)")
        #expect(exported.contains("title: Dune"), "\(exported)")
        // Ben accepted (the default), so the exported share lists him.
        #expect(exported.contains("ben"), "\(exported)")
    }
}
