import Foundation
import SharelaneTestSupport
import Testing

/// Records a `repeat:` made are one line of a text or markdown plan, of `apply`'s output and of a lane's
/// `apply` step, unless `--expand`.
@Suite("Generated records in plans")
struct GeneratedPlanTests {
    let directory: TemporaryDirectory
    var store: String { "sqlite:" + directory.file("store.sqlite") }

    init() throws { directory = try TemporaryDirectory("generated-plan") }

    static let recipe = """
        sharelane: 1
        name: household
        users:
          alice: { email: alice@example.com }
        owner: alice
        zones:
          Household:
            records:
              list: { type: List, fields: { title: Groceries } }
              "item-{{i:03}}":
                repeat: 200
                type: Item
                fields: { title: "Item {{i}}", qty: 2 }
        lanes:
          fill:
            steps:
              - apply
        """

    func run(_ arguments: [String]) async throws -> SharelaneBinary.Result {
        try await SharelaneBinary.run(arguments, in: directory.url, environment: ["NO_COLOR": "1"])
    }

    @Test("plan shows 200 generated records as one line; --expand shows each; markdown and lanes alike")
    func oneLine() async throws {
        let recipe = try directory.write("household.yaml", Self.recipe)
        let plan = try await run(["plan", recipe, "--store", store])
        #expect(plan.status == 0, "\(plan.output)")
        #expect(
            plan.stdout.contains(
                "  + zone Household\n  + record Household/list\n      type:  List\n      title: \"Groceries\"\n"
                    + "  + 200 records Household/item-{001…200} (Item)\n"
            ), "\(plan.stdout)")
        #expect(!plan.stdout.contains("item-002"), "\(plan.stdout)")
        #expect(plan.stdout.hasSuffix("Plan: 202 to add, 0 to change, 0 to destroy.\n"), "\(plan.stdout)")
        // The schema's five lines, the zone, the list record, the run, the summary: no line per record.
        #expect(plan.stdout.split(separator: "\n").count < 25, "\(plan.stdout)")

        let expanded = try await run(["plan", recipe, "--expand", "--store", store])
        #expect(
            expanded.stdout.contains("  + record Household/item-200\n      type:  Item\n      qty:   2\n"),
            "\(expanded.stdout)")
        #expect(!expanded.stdout.contains("200 records"))

        let markdown = try await run(["plan", recipe, "--format", "markdown", "--store", store])
        #expect(markdown.stdout.contains("\n+ 200 records Household/item-{001…200} (Item)\n"), "\(markdown.stdout)")
        #expect(markdown.stdout.contains("<summary>Show 202 changes</summary>"), "\(markdown.stdout)")
        #expect(markdown.stdout.utf8.count < 2_000, "\(markdown.stdout.utf8.count) bytes")

        let lane = try await run(["run", "fill", recipe, "--store", store])
        #expect(lane.status == 0, "\(lane.output)")
        #expect(lane.stdout.contains("    + 200 records Household/item-{001…200} (Item)\n"), "\(lane.stdout)")

        // A change to the template changes all 200 alike: one line again.
        let changed = try directory.write(
            "household.yaml", Self.recipe.replacingOccurrences(of: "qty: 2", with: "qty: 3"))
        let update = try await run(["plan", changed, "--store", store])
        #expect(update.stdout.contains("  ~ 200 records Household/item-{001…200} (Item)\n"), "\(update.stdout)")
    }
}
