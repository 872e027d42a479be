import Applier
import Foundation
import PlanModel
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport
import Testing

/// A recipe's `subscriptions:` planned, applied, planned again and exported, on the SQLite store.
@Suite("Subscriptions in recipes")
struct SubscriptionPlanTests {
    /// Alice's private and shared database subscriptions as Apple's CloudKitShare sample makes them, a zone
    /// and a query subscription of hers, a public query subscription, and Bob's shared database one.
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

    static let addresses = [
        "subscription alice/private/private-changes", "subscription alice/shared/shared-changes",
        "subscription alice/private/topics", "subscription alice/private/new-topics",
        "subscription alice/public/cards", "subscription bob/shared/shared-changes",
    ]

    static func recipe(_ text: String = yaml) throws -> Recipe {
        try RecipeLoader(environment: [:]).load(yaml: text, file: "subscriptions.yaml")
    }

    static func plan(_ recipe: Recipe, _ store: any Store, prune: Bool = false, destroy: Bool = false)
        async throws -> Plan
    {
        var options = PlanOptions()
        options.prune = prune
        options.destroy = destroy
        return try await Planner(store: store, logger: quietLogger).plan(recipe, options: options)
    }

    static func apply(_ plan: Plan, _ store: any Store) async throws -> ApplyReport {
        let report = try await PlanAndApply(store: store, logger: quietLogger).apply(plan)
        #expect(report.failures == [], "\(report.failures.map(\.description))")
        return report
    }

    static func ids(_ store: any Store, _ email: String, _ database: DatabaseScope) async throws -> [String] {
        let user = try #require(try await store.signInExisting(email: email)).recordName
        return try await store.listSubscriptions(in: database, as: user).map(\.subscriptionID).sorted()
    }

    /// Plans, applies, plans again (nothing), exports, and plans the export (nothing); returns the export.
    static func roundTrip(_ store: any Store) async throws -> String {
        let recipe = try recipe()
        let plan = try await plan(recipe, store)
        #expect(plan.changes.filter { $0.kind == .subscription }.map(\.address) == addresses)
        #expect(plan.changes.filter { $0.kind == .subscription }.allSatisfy { $0.action == .create })
        // Subscriptions come after the zone, records and shares they may watch, before any deletion.
        let kinds = plan.changes.map(\.kind)
        let firstSubscription = try #require(kinds.firstIndex(of: .subscription))
        #expect(firstSubscription > (kinds.firstIndex(of: .share) ?? kinds.count))
        let report = try await apply(plan, store)
        #expect(report.line.contains("\(plan.summary.add) added"), "\(report.line)")
        #expect(
            try await ids(store, "alice@example.com", .private) == ["new-topics", "private-changes", "topics"])
        #expect(try await ids(store, "alice@example.com", .shared) == ["shared-changes"])
        #expect(try await ids(store, "alice@example.com", .public) == ["cards"])
        #expect(try await ids(store, "bob@example.com", .shared) == ["shared-changes"])
        let alice = try #require(try await store.signInExisting(email: "alice@example.com")).recordName
        let topics = try #require(
            try await store.listSubscriptions(in: .private, as: alice).first { $0.subscriptionID == "topics" })
        #expect(topics.kind == .zone && topics.zoneID?.zoneName == "Topics" && topics.alertBody == "Topics changed")

        let again = try await Self.plan(recipe, store)
        #expect(again.isEmpty, "\(TextPlanRenderer().render(again))")
        #expect(again.notes == [])

        let owner = try #require(try await store.signInExisting(email: "alice@example.com"))
        let export = try await Exporter(store: store, logger: quietLogger).export(owner: owner, name: "subscriptions")
        #expect(export.contains("subscriptions:\n"), "\(export)")
        #expect(
            export.contains(
                "- {as: alice, id: topics, database: private, type: zone, zone: Topics, alert: Topics changed}"))
        let exported = try RecipeLoader(environment: [:]).load(yaml: export, file: "exported.yaml")
        #expect(exported.subscriptions.count == 6)
        let fromExport = try await Self.plan(exported, store)
        #expect(fromExport.isEmpty, "\(TextPlanRenderer().render(fromExport))")
        return export
    }

    @Test(
        "plan adds the declared subscriptions, apply makes them as each user, a second plan and the export's plan are empty"
    )
    func roundTripOnSQLite() async throws {
        let scratch = try TemporaryDirectory("subscriptions")
        let store = try SQLiteStore(path: scratch.file("store.sqlite"), logger: quietLogger)
        _ = try await Self.roundTrip(store)
    }

    /// The store after the recipe's apply, with Alice's `topics` alert changed and an undeclared
    /// subscription of hers added behind the recipe's back.
    static func changedBehindItsBack() async throws -> (Recipe, SQLiteStore) {
        let store = try freshStore()
        let recipe = try recipe()
        _ = try await apply(try await plan(recipe, store), store)
        let alice = try #require(try await store.signInExisting(email: "alice@example.com")).recordName
        let outcomes = try await store.modifySubscriptions(
            [
                .init(.update, .zone("topics", ZoneID(zoneName: "Topics"), alertBody: "Something changed")),
                .init(.create, .database("undeclared")),
            ], in: .private, as: alice)
        #expect(outcomes.allSatisfy { $0.error == nil }, "\(outcomes)")
        return (recipe, store)
    }

    @Test(
        "an apply whose writes fire a declared fires_once subscription saves it again: a second apply changes nothing")
    func firesOnceIsSavedAgain() async throws {
        let store = try freshStore()
        _ = try await Self.roundTrip(store)
        let alice = try #require(try await store.signInExisting(email: "alice@example.com")).recordName
        let channel = try await store.openNotificationChannel(apnsEnvironment: "development", as: alice)
        // A new Topic fires `new-topics` (fires_once: create), which CloudKit then removes.
        let edited = try Self.recipe(
            Self.yaml.replacingOccurrences(
                of: "welcome: { type: Topic, fields: { title: Welcome } }",
                with: "welcome: { type: Topic, fields: { title: Welcome } }\n      rules: { type: Topic }"))
        let plan = try await Self.plan(edited, store)
        #expect(plan.changes.map(\.address) == ["record Topics/rules"])
        #expect(plan.rearm?.map(\.path) == ["alice/private/new-topics"])
        _ = try await Self.apply(plan, store)
        let heard = try await store.receiveNotifications(on: channel, limit: 10, as: alice)
        #expect(heard.filter { $0.subscriptionID == "new-topics" }.map(\.recordName) == ["rules"])
        #expect(try await Self.ids(store, "alice@example.com", .private).contains("new-topics"))
        let again = try await Self.plan(edited, store)
        #expect(again.changes.map(\.address) == [])
    }

    @Test("a subscription that differs is updated; an undeclared one is kept with a note, or deleted under --prune")
    func differsAndUndeclared() async throws {
        let (recipe, store) = try await Self.changedBehindItsBack()
        let plan = try await Self.plan(recipe, store)
        #expect(plan.changes.map(\.address) == ["subscription alice/private/topics"])
        #expect(plan.changes.first?.action == .update)
        #expect(
            plan.changes.first?.attributes
                == [
                    AttributeChange(
                        name: "alert", isField: false, before: .text("Something changed"),
                        after: .text("Topics changed"))
                ])
        #expect(plan.notes == ["1 undeclared subscription of alice kept in the private database; --prune deletes it."])
        #expect(plan.summary.line == "Plan: 0 to add, 1 to change, 0 to destroy.")

        let pruned = try await Self.plan(recipe, store, prune: true)
        #expect(
            pruned.changes.map(\.address) == [
                "subscription alice/private/topics", "subscription alice/private/undeclared",
            ])
        #expect(pruned.summary.line == "Plan: 0 to add, 1 to change, 1 to destroy.")
        _ = try await Self.apply(pruned, store)
        #expect(
            try await Self.ids(store, "alice@example.com", .private) == ["new-topics", "private-changes", "topics"])
        #expect(try await Self.plan(recipe, store, prune: true).isEmpty)
    }

    @Test("the text, markdown and JSON renderings of subscription changes", arguments: ["txt", "md", "json"])
    func golden(_ format: String) async throws {
        let (recipe, store) = try await Self.changedBehindItsBack()
        let bob = try #require(try await store.signInExisting(email: "bob@example.com")).recordName
        _ = try await store.modifySubscriptions([.delete("shared-changes")], in: .shared, as: bob)
        let plan = try await Self.plan(recipe, store, prune: true)
        let text: String
        switch format {
        case "txt": text = TextPlanRenderer().render(plan)
        case "md": text = MarkdownPlanRenderer().render(plan)
        default: text = JSONPlanRenderer().render(plan)
        }
        try assertGolden(text, "subscriptions.\(format)")
    }

    @Test("a saved plan carries its subscription changes and applies them")
    func savedPlan() async throws {
        let store = try freshStore()
        let plan = try await Self.plan(try Self.recipe(), store)
        let scratch = try TemporaryDirectory("saved")
        let path = scratch.file("plan.json")
        try SavedPlan.write(plan, to: path)
        let read = try SavedPlan.read(from: path)
        #expect(read.changes == plan.changes)
        #expect(read.changes.contains { $0.subscription?.subscription.alertBody == "Topics changed" })
        _ = try await Self.apply(read, store)
        #expect(try await Self.plan(try Self.recipe(), store).isEmpty)
    }

    @Test("destroy deletes the declared subscriptions; --target picks one subscription and the zone it watches")
    func destroyAndTarget() async throws {
        let store = try freshStore()
        let recipe = try Self.recipe()
        var options = PlanOptions()
        options.targets = ["subscription alice/private/topics"]
        let targeted = try await Planner(store: store, logger: quietLogger).plan(recipe, options: options)
        #expect(targeted.changes.map(\.address) == ["zone Topics", "subscription alice/private/topics"])
        _ = try await Self.apply(try await Self.plan(recipe, store), store)
        let destroy = try await Self.plan(recipe, store, destroy: true)
        #expect(destroy.changes.filter { $0.kind == .subscription }.map(\.address) == Self.addresses)
        #expect(destroy.changes.filter { $0.kind == .subscription }.allSatisfy { $0.action == .delete })
        _ = try await Self.apply(destroy, store)
        #expect(try await Self.ids(store, "alice@example.com", .private) == [])
        #expect(try await Self.ids(store, "bob@example.com", .shared) == [])
    }

    @Test("a plan reads subscriptions once per user and database the recipe declares them in, and not at all without")
    func storeCalls() async throws {
        let base = try freshStore()
        let recipe = try Self.recipe()
        _ = try await Self.apply(try await Self.plan(recipe, base), base)
        let store = CountingStore(base)
        #expect(try await Self.plan(recipe, store).isEmpty)
        // alice private, shared and public; bob shared.
        #expect(store.calls["listSubscriptions"] == 4, "\(store.calls)")
        store.resetCounts()
        var without = recipe
        without.subscriptions = []
        _ = try await Self.plan(without, store)
        #expect(store.calls["listSubscriptions"] == nil, "\(store.calls)")
    }

    @Test("a plan from the cache file reads subscriptions too, and plans as a full read does")
    func incrementalPlansReadSubscriptions() async throws {
        let scratch = try TemporaryDirectory("subscription-cache")
        let cache = PlanCache(file: scratch.url.appendingPathComponent("plan.json"))
        let path = scratch.file("subscriptions.yaml")
        try Self.yaml.write(toFile: path, atomically: true, encoding: .utf8)
        let recipe = try RecipeLoader(environment: [:]).load(path: path)
        let base = try freshStore()
        _ = try await Self.apply(try await Self.plan(recipe, base), base)
        let loads = IncrementalPlanTests.LoadCounter()
        _ = try await IncrementalPlanTests.planFile(path, base, cache: cache, loads: loads)
        _ = try await IncrementalPlanTests.planFile(path, base, cache: cache, loads: loads)
        // No change feed tells of it: Alice deletes a subscription and Bob's changes.
        let alice = try #require(try await base.signInExisting(email: "alice@example.com")).recordName
        let bob = try #require(try await base.signInExisting(email: "bob@example.com")).recordName
        _ = try await base.modifySubscriptions([.delete("new-topics")], in: .private, as: alice)
        _ = try await base.modifySubscriptions(
            [.init(.update, .database("shared-changes", alertBody: "Shared"))], in: .shared, as: bob)
        let store = CountingStore(base)
        let cached = try await IncrementalPlanTests.planFile(path, store, cache: cache, loads: loads)
        #expect(loads.count == 0, "the unchanged file is planned from the cache file")
        #expect(store.calls["zoneChanges"] == nil, "\(store.calls)")
        #expect(store.calls["listSubscriptions"] == 4, "\(store.calls)")
        #expect(
            cached.changes.map(\.address) == [
                "subscription alice/private/new-topics", "subscription bob/shared/shared-changes",
            ])
        IncrementalPlanTests.expectSame(cached, try await Self.plan(recipe, base))
        _ = try await Self.apply(cached, base)
        let quiet = try await IncrementalPlanTests.planFile(path, base, cache: cache, loads: loads)
        #expect(quiet.isEmpty, "\(TextPlanRenderer().render(quiet))")
    }
}
