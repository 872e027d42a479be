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

/// Every recipe in `Recipes/` planned and applied through `http:` (the emulator over a SQLite file) plans
/// exactly as it does on the SQLite store: the same JSON plan, the same apply, the same export.
@Suite(.serialized) struct RecipesOverHTTPTests {
    static let recipesDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Recipes")

    /// The recipes' file names; an empty or missing folder is an error, not zero cases.
    static func recipeFiles() throws -> [String] {
        try FixtureFolder(recipesDirectory).files().map(\.lastPathComponent)
    }

    /// The plan's JSON with the store's name taken out (it names the store, which differs by design).
    static func json(_ plan: Plan) -> String {
        var plan = plan
        plan.storeName = "(store)"
        return JSONPlanRenderer().render(plan)
    }

    struct Run: Sendable {
        var firstPlan: String
        var applyLine: String
        var failures: [String]
        var secondPlan: String
        var export: String
    }

    static func run(_ recipe: Recipe, on store: any Store) async throws -> Run {
        let planner = Planner(store: store, logger: EmulatorHarness.quiet)
        let plan = try await planner.plan(recipe)
        let report = try await Applier(store: store, logger: EmulatorHarness.quiet).apply(plan)
        let again = try await planner.plan(recipe)
        let owner = try await store.signIn(email: plan.owner.email ?? "", name: nil)
        let export = try await Exporter(store: store, logger: EmulatorHarness.quiet).export(
            owner: owner, name: recipe.name)
        return Run(
            firstPlan: json(plan), applyLine: report.line, failures: report.failures.map(\.description),
            secondPlan: json(again),
            // The first comment line names the store, which differs by design.
            export: export.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.hasPrefix("# Exported by") }.joined(separator: "\n"))
    }

    @Test func thereAreRecipes() throws {
        #expect(try Self.recipeFiles().count >= 3)
    }

    @Test(arguments: try recipeFiles())
    func aRecipePlansAndAppliesTheSameOverHTTP(_ file: String) async throws {
        let recipe = try RecipeLoader(environment: [:]).load(
            path: Self.recipesDirectory.appendingPathComponent(file).path)
        let scratch = try TemporaryDirectory("local")
        let local = try SQLiteStore(path: scratch.file("local.sqlite"), logger: EmulatorHarness.quiet)
        let expected = try await Self.run(recipe, on: local)
        #expect(expected.failures == [])
        #expect(!expected.applyLine.contains(" 0 added"), "the recipe should create something: \(expected.applyLine)")
        let actual = try await EmulatorHarness.withEmulator {
            base in
            try await Self.run(recipe, on: EmulatorHarness.store(base, for: recipe))
        }
        #expect(actual.firstPlan == expected.firstPlan)
        #expect(actual.applyLine == expected.applyLine)
        #expect(actual.failures == expected.failures)
        #expect(actual.secondPlan == expected.secondPlan)
        #expect(actual.export == expected.export)
    }

    @Test(
        "over http: a plan creates no users in sharelane serve; the first apply of a VALIDATE reference to a later record succeeds"
    )
    func planWritesNothingOverHTTP() async throws {
        let recipe = try RecipeLoader(environment: [:]).load(
            yaml: """
                sharelane: 1
                name: fasting
                users: { alice: { email: alice@example.com }, bob: { email: bob@example.com } }
                owner: alice
                zones:
                  Fasting:
                    share: { participants: { bob: read-only } }
                    records:
                      f1: { type: Fast, fields: { next: { ref: f2, action: validate } } }
                      f2: { type: Fast, fields: { n: 2 } }
                """, file: "fasting.yaml")
        let scratch = try TemporaryDirectory("emulator")
        let path = scratch.file("serve.sqlite")
        try await EmulatorHarness.withEmulator(storePath: path) { base in
            let store = EmulatorHarness.store(base, for: recipe)
            let planner = Planner(store: store, logger: EmulatorHarness.quiet)
            let plan = try await planner.plan(recipe)
            #expect(plan.summary.add == 5)
            let served = try SQLiteStore(path: path, logger: EmulatorHarness.quiet)
            #expect(try await served.allUsers() == [], "planning over http: signed users in")
            let report = try await Applier(store: store, logger: EmulatorHarness.quiet).apply(plan)
            #expect(report.failures == [])
            #expect(try await served.allUsers().map(\.email) == ["alice@example.com", "bob@example.com"])
            #expect(try await planner.plan(recipe).changes == [])
        }
    }
}
