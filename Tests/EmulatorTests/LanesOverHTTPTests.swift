import CloudKitWire
import Foundation
import Lanes
import Planner
import Recipe
import ShareKit
import SharelaneTestSupport
import ShareStoreSQLite
import Testing

/// Every lane of every recipe in `Recipes/` gives the same outcome through `http:` (the emulator over a
/// SQLite file) as on the SQLite store: the same step lines, and afterwards the same JSON plan.
@Suite(.serialized) struct LanesOverHTTPTests {
    struct RecipeLaneCase: Sendable, CustomTestStringConvertible {
        var file: String
        var lane: String
        var testDescription: String { "\(file) \(lane)" }
    }

    static func cases() throws -> [RecipeLaneCase] {
        try RecipesOverHTTPTests.recipeFiles().flatMap { file -> [RecipeLaneCase] in
            let path = RecipesOverHTTPTests.recipesDirectory.appendingPathComponent(file).path
            let recipe = try RecipeLoader(environment: [:]).load(path: path)
            return recipe.lanes.filter { !$0.isPrivate }.map { RecipeLaneCase(file: file, lane: $0.name) }
        }
    }

    struct Outcome: Sendable, Equatable {
        var succeeded: Bool
        var lines: [String]
        var planAfter: String
    }

    static func run(_ item: RecipeLaneCase, on store: any Store) async throws -> Outcome {
        let path = RecipesOverHTTPTests.recipesDirectory.appendingPathComponent(item.file).path
        let load: LaneRunner.RecipeReloader = { overrides in
            try RecipeLoader(environment: [:], overrides: overrides).load(path: path)
        }
        let recipe = try load([:])
        let lines = LogLines()
        let runner = LaneRunner(
            store: store, output: LaneOutput { lines.append($0) }, logger: EmulatorHarness.quiet, reload: load)
        let report = try await runner.run(lane: item.lane, of: recipe)
        let plan = try await Planner(store: store, logger: EmulatorHarness.quiet).plan(recipe)
        // Times, the store's name and a share's URL (random on each store) differ by design, and so do an
        // apply's progress lines: written by the clock and when a store call waits, as the store answers.
        let normalized = lines.all.filter { !$0.contains(/\d+ of \d+ changes? applied/) }.map {
            $0.replacing(/\d+ ms/, with: "… ms").replacing(store.displayName, with: "(store)")
                .replacing(/share\/[0-9A-Za-z]{25}/, with: "share/…")
        }
        return Outcome(succeeded: report.succeeded, lines: normalized, planAfter: RecipesOverHTTPTests.json(plan))
    }

    @Test func thereAreLanes() throws {
        #expect(try Self.cases().count >= 5)
    }

    @Test(arguments: try cases())
    func aLaneRunsTheSameOverHTTP(_ item: RecipeLaneCase) async throws {
        let scratch = try TemporaryDirectory("local")
        let path = RecipesOverHTTPTests.recipesDirectory.appendingPathComponent(item.file).path
        let recipe = try RecipeLoader(environment: [:]).load(path: path)
        // The recipe's world on both stores, as the command line opens them (a lane's header names it).
        let local = try SQLiteStore(
            path: scratch.file("local.sqlite"), container: recipe.container, environment: recipe.environment,
            logger: EmulatorHarness.quiet)
        let expected = try await Self.run(item, on: local)
        let actual = try await EmulatorHarness.withEmulator {
            base in
            try await Self.run(item, on: EmulatorHarness.store(base, for: recipe))
        }
        #expect(actual.succeeded == expected.succeeded)
        #expect(actual.lines == expected.lines)
        #expect(actual.planAfter == expected.planAfter)
    }
}
