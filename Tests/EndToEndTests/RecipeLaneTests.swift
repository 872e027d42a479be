import Foundation
import SharelaneTestSupport
import Testing

/// One lane of one recipe of `Recipes/`.
struct RecipeLane: Sendable, CustomTestStringConvertible {
    var recipe: String
    var lane: String
    var testDescription: String { "\(recipe) \(lane)" }

    static func all() async throws -> [RecipeLane] {
        var all: [RecipeLane] = []
        for recipe in try SharelaneBinary.recipes() {
            all += try await SharelaneBinary.lanes(of: recipe).filter { !$0.private }.map {
                RecipeLane(recipe: recipe, lane: $0.name)
            }
        }
        return all
    }
}

@Suite("Recipes/ lanes through the sharelane binary")
struct RecipeLaneTests {
    @Test("every lane of every recipe runs on a fresh store", arguments: try await RecipeLane.all())
    func laneRunsOnFreshStore(_ item: RecipeLane) async throws {
        let scratch = try TemporaryDirectory("e2e")
        let directory = scratch.url
        let store = "sqlite:" + directory.appendingPathComponent("store.sqlite").path
        let result = try await SharelaneBinary.run(["run", item.lane, item.recipe, "--store", store])
        // Every lane of a worked example succeeds; a refusal it shows is a step with `expect_error:`.
        #expect(result.status == 0, "\(item.recipe) lane \(item.lane) failed:\n\(result.output)")
        #expect(result.stdout.contains("✔ lane \(item.lane) succeeded"), "\(result.output)")
        #expect(!result.stdout.contains("✘"), "\(result.output)")
    }

    @Test("every recipe has a lane whose expect steps prove what it shows")
    func everyRecipeHasAnExpectingLane() throws {
        let recipes = try SharelaneBinary.recipes()
        #expect(recipes.count >= 6, "Recipes/ should hold the six worked examples: \(recipes)")
        for recipe in recipes {
            let text = try String(
                contentsOf: BuiltProducts.packageRoot.appendingPathComponent(recipe), encoding: .utf8)
            #expect(text.contains("- expect:"), "\(recipe) has no expect step")
        }
    }

    @Test("the demo runs twice in a row on the default store, as the README says")
    func demoRunsTwiceOnDefaultStore() async throws {
        let scratch = try TemporaryDirectory("e2e")
        let directory = scratch.url
        let recipes = directory.appendingPathComponent("Recipes")
        try FileManager.default.createDirectory(at: recipes, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml"),
            to: recipes.appendingPathComponent("sharelane.yaml"))

        let first = try await SharelaneBinary.run(["run", "demo"], in: directory)
        #expect(first.status == 0, "first run:\n\(first.output)")
        #expect(first.stdout.contains("✔ lane demo succeeded"), "\(first.output)")
        #expect(
            FileManager.default.fileExists(atPath: directory.appendingPathComponent(".sharelane/store.sqlite").path))

        let second = try await SharelaneBinary.run(["run", "demo"], in: directory)
        #expect(second.status == 0, "second run:\n\(second.output)")
        #expect(second.stdout.contains("✔ lane demo succeeded"), "\(second.output)")
        #expect(second.stdout.contains("already accepted"), "\(second.output)")
    }

    /// What `expect` cannot read (the public database), `show` can: the contacts example's public profile
    /// carries the live URL of Alice's private share, and a stranger who sees the profile gets nothing more.
    @Test func contactsProfileCarriesTheShareURL() async throws {
        let scratch = try TemporaryDirectory("e2e")
        let directory = scratch.url
        let store = "sqlite:" + directory.appendingPathComponent("store.sqlite").path
        let run = try await SharelaneBinary.run(["run", "friends-only", "Recipes/contacts.yaml", "--store", store])
        #expect(run.status == 0, "\(run.output)")

        let recipe = "Recipes/contacts.yaml"
        let owner = try await SharelaneBinary.run([
            "show", "--recipe", recipe, "--store", store, "--zone", "PrivateInfo",
        ])
        let stranger = try await SharelaneBinary.run([
            "show", "--recipe", recipe, "--store", store, "--as", "mallory@example.com",
        ])
        let pattern = #"https://[^" ]+/share/[0-9a-zA-Z]+"#
        let shareURL = try #require(
            owner.stdout.range(of: pattern, options: .regularExpression).map { owner.stdout[$0] })
        let profileLine = try #require(stranger.stdout.split(separator: "\n").first { $0.contains("privateShareURL") })
        #expect(profileLine.contains(shareURL), "profile: \(profileLine), share: \(shareURL)")
        #expect(stranger.stdout.contains("(nothing shared with this user and accepted)"), "\(stranger.output)")
    }
}
