import CloudKitWire
import Foundation
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
          - { as: alice, id: new-topics, type: query, zone: Topics, record_type: Topic, fires_on: [create] }
          - { id: cards, database: public, type: query, record_type: Topic }
          - { as: bob, id: shared-changes, database: shared, type: database, fires_once: true }
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
            let report = try await Applier(store: store, logger: EmulatorHarness.quiet).apply(plan)
            #expect(report.failures == [], "\(report.failures.map(\.description))")

            // What the server keeps, read through the wire as each user.
            let alice = try #require(try await store.signInExisting(email: "alice@example.com")).recordName
            let bob = try #require(try await store.signInExisting(email: "bob@example.com")).recordName
            let alicePrivate = try await store.listSubscriptions(in: .private, as: alice)
            #expect(alicePrivate.map(\.subscriptionID).sorted() == ["new-topics", "private-changes", "topics"])
            let newTopics = try #require(alicePrivate.first { $0.subscriptionID == "new-topics" })
            #expect(newTopics.kind == .query && newTopics.recordType == "Topic" && newTopics.firesOn == [.create])
            #expect(newTopics.zoneID?.zoneName == "Topics")
            let bobShared = try await store.listSubscriptions(in: .shared, as: bob)
            #expect(bobShared.map(\.subscriptionID) == ["shared-changes"] && bobShared.first?.firesOnce == true)

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
            let repaired = try await Applier(store: store, logger: EmulatorHarness.quiet).apply(repair)
            #expect(repaired.failures == [])
            #expect(try await planner.plan(recipe).isEmpty)
        }
    }
}
