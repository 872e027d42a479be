import Foundation
import SharelaneTestSupport
import Testing

/// A lane's `export` step keeps the recipe's handles, as `sharelane export` does: through the built binary, the
/// state a lane exports names `maya` (not `maya-okafor`, made from her address), plans to no changes against
/// the store it came from, and runs a lane written for the recipe.
@Suite("A lane's export keeps the recipe's handles")
struct LaneExportHandleTests {
    static let recipe = """
        sharelane: 1
        name: trip
        users:
          ann: { email: ann.lee@example.com }
          maya: { email: maya.okafor@example.com }
        owner: ann
        zones:
          Trip:
            share: { participants: { maya: read-write } }
            records:
              lisbon: { type: Stop, fields: { city: Lisbon } }
        lanes:
          snapshot:
            steps:
              - apply
              - export: { out: exported.yaml }

        """

    @Test("the exported state keeps maya, plans to nothing, and fits the recipe's lanes")
    func keepsHandles() throws {
        let directory = try TemporaryDirectory("lane-export")
        _ = try directory.write("trip.yaml", Self.recipe)
        let store = "sqlite:" + directory.file("store.sqlite")
        let run = try SharelaneBinary.run(["run", "snapshot", "trip.yaml", "--store", store], in: directory.url)
        #expect(run.status == 0, "\(run.output)")

        let text = try String(contentsOfFile: directory.file("exported.yaml"), encoding: .utf8)
        #expect(text.contains("  maya: {email: maya.okafor@example.com"), "\(text)")
        #expect(text.contains("owner: ann\n"), "\(text)")
        #expect(text.contains("        maya: {permission: read-write"), "\(text)")
        #expect(!text.contains("maya-okafor:") && !text.contains("ann-lee"), "\(text)")

        let plan = try SharelaneBinary.run(
            ["plan", "exported.yaml", "--store", store, "--detailed-exitcode"], in: directory.url)
        #expect(plan.status == 0, "\(plan.output)")
        #expect(plan.stdout.hasSuffix("Plan: 0 to add, 0 to change, 0 to destroy.\n"), "\(plan.stdout)")

        // A lane written for the recipe runs against the export: `maya` still names her.
        let withLane = try directory.write(
            "exported-lane.yaml",
            text + """

                lanes:
                  check:
                    steps:
                      - expect: { as: maya, can: write, zone: Trip }
                """)
        let check = try SharelaneBinary.run(["run", "check", withLane, "--store", store], in: directory.url)
        #expect(check.status == 0, "\(check.output)")
    }
}
