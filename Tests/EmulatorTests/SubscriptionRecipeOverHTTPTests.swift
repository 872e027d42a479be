import Applier
import CloudKitWire
import Foundation
import PlanModel
import Planner
import Recipe
import ShareKit
import SharelaneTestSupport
import Testing

/// A recipe's `subscriptions:` over `http:` against a real `sharelane serve`: the client lists them to plan,
/// saves them as each user through `subscriptions/modify`, and the second plan and the export's plan are
/// empty.
@Suite(.serialized) struct SubscriptionRecipeOverHTTPTests {
    static let yaml = """
        sharelane: 1
        name: subscriptions
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
        owner: alice
        zones:
          Topics:
            share:
              participants:
                bob: { permission: read-write }
            records:
              welcome: { type: Topic, fields: { title: Welcome } }
        subscriptions:
          - { as: alice, id: private-changes, database: private, type: database }
          - { as: alice, id: shared-changes, database: shared, type: database }
          - { as: alice, id: topics, type: zone, zone: Topics, alert: Topics changed }
          - { as: alice, id: new-topics, type: query, zone: Topics, record_type: Topic, fires_on: [create], fires_once: true }
          - { id: cards, database: public, type: query, record_type: Topic }
          - { as: bob, id: shared-changes, database: shared, type: database }
        """

    @Test("plan, apply, a second plan with no changes, export and the export's plan, over http:")
    func roundTrip() async throws {
        let recipe = try RecipeLoader(environment: [:]).load(yaml: Self.yaml, file: "subscriptions.yaml")
        try await EmulatorHarness.withEmulator { base in
            let store = EmulatorHarness.store(base, for: recipe)
            let planner = Planner(store: store, logger: EmulatorHarness.quiet)
            let plan = try await planner.plan(recipe)
            let text = TextPlanRenderer().render(plan)
            #expect(text.contains("  + subscription alice/private/private-changes (database)\n"), "\(text)")
            #expect(text.contains("  + subscription bob/shared/shared-changes (database)\n"), "\(text)")
            #expect(plan.changes.filter { $0.kind == .subscription }.count == 6)
            let report = try await PlanAndApply(store: store, logger: EmulatorHarness.quiet).apply(plan)
            #expect(report.failures == [], "\(report.failures.map(\.description))")

            // What the server keeps, read through the wire as each user.
            let alice = try #require(try await store.signInExisting(email: "alice@example.com")).recordName
            let bob = try #require(try await store.signInExisting(email: "bob@example.com")).recordName
            let alicePrivate = try await store.listSubscriptions(in: .private, as: alice)
            #expect(alicePrivate.map(\.subscriptionID).sorted() == ["new-topics", "private-changes", "topics"])
            let newTopics = try #require(alicePrivate.first { $0.subscriptionID == "new-topics" })
            #expect(newTopics.kind == .query && newTopics.recordType == "Topic" && newTopics.firesOn == [.create])
            #expect(newTopics.firesOnce)
            #expect(newTopics.zoneID?.zoneName == "Topics")
            let bobShared = try await store.listSubscriptions(in: .shared, as: bob)
            #expect(bobShared.map(\.subscriptionID) == ["shared-changes"])

            let again = try await planner.plan(recipe)
            #expect(again.isEmpty, "\(TextPlanRenderer().render(again))")

            let owner = try await store.signIn(email: "alice@example.com", name: nil)
            let export = try await Exporter(store: store, logger: EmulatorHarness.quiet).export(
                owner: owner, name: "subscriptions")
            let exported = try RecipeLoader(environment: [:]).load(yaml: export, file: "exported.yaml")
            #expect(
                exported.subscriptions.map(\.path).sorted() == recipe.subscriptions.map(\.path).sorted(), "\(export)")
            let fromExport = try await planner.plan(exported)
            #expect(fromExport.isEmpty, "\(TextPlanRenderer().render(fromExport))")

            // A change behind the recipe's back is found and put right.
            _ = try await store.modifySubscriptions([.delete("topics")], in: .private, as: alice)
            let repair = try await planner.plan(recipe)
            #expect(repair.changes.map(\.address) == ["subscription alice/private/topics"])
            let repaired = try await PlanAndApply(store: store, logger: EmulatorHarness.quiet).apply(repair)
            #expect(repaired.failures == [])
            #expect(try await planner.plan(recipe).isEmpty)
        }
    }

    /// Plans the recipe file as `sharelane plan` does, with a new client each time (a new command): from the
    /// cache file when the file is unchanged, else loaded.
    static func planFile(_ path: String, base: String, cache: PlanCache) async throws -> Plan {
        let recipe = try RecipeLoader(environment: [:]).load(path: path)
        let planner = Planner(store: EmulatorHarness.store(base, for: recipe), logger: EmulatorHarness.quiet)
        if let unchanged = cache.unchangedRecipe(environment: [:]) {
            return try await planner.plan(unchanged, options: PlanOptions(cache: cache)) {
                try RecipeLoader(environment: [:]).loadWithInputs(path: path)
            }
        }
        let loaded = try RecipeLoader(environment: [:]).loadWithInputs(path: path)
        return try await planner.plan(loaded.recipe, inputs: loaded.inputs, options: PlanOptions(cache: cache))
    }

    @Test("a plan from the cache file, in a new command, reads every user's subscriptions over http:")
    func cachedPlanOverHTTP() async throws {
        let scratch = try TemporaryDirectory("subscription-cache")
        let path = scratch.file("subscriptions.yaml")
        try Self.yaml.write(toFile: path, atomically: true, encoding: .utf8)
        let cache = PlanCache(file: scratch.url.appendingPathComponent("plan.json"))
        let recipe = try RecipeLoader(environment: [:]).load(path: path)
        try await EmulatorHarness.withEmulator { base in
            let store = EmulatorHarness.store(base, for: recipe)
            let plan = try await Planner(store: store, logger: EmulatorHarness.quiet).plan(recipe)
            #expect(try await PlanAndApply(store: store, logger: EmulatorHarness.quiet).apply(plan).failures == [])
            #expect(try await Self.planFile(path, base: base, cache: cache).isEmpty)
            #expect(cache.unchangedRecipe(environment: [:]) != nil, "the next plan comes from the cache file")
            #expect(try await Self.planFile(path, base: base, cache: cache).isEmpty)
            // An export by a new command, signed in as the owner alone, still reads Bob's.
            let fresh = EmulatorHarness.store(base, for: recipe)
            let owner = try await fresh.signIn(email: "alice@example.com", name: nil)
            let export = try await Exporter(store: fresh, logger: EmulatorHarness.quiet).export(
                owner: owner, name: "subscriptions")
            #expect(export.contains("- {as: bob, id: shared-changes, database: shared, type: database}\n"), "\(export)")
            #expect(!export.contains("not exported"), "\(export)")
            // Bob's subscription goes behind the recipe's back; the plan from the cache file finds it.
            let bob = try #require(try await store.signInExisting(email: "bob@example.com")).recordName
            _ = try await store.modifySubscriptions([.delete("shared-changes")], in: .shared, as: bob)
            let cached = try await Self.planFile(path, base: base, cache: cache)
            #expect(cached.changes.map(\.address) == ["subscription bob/shared/shared-changes"])
        }
    }
}
