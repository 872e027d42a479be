import Applier
import Foundation
import PlanModel
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite
import Testing

/// `sharelane destroy` and `--target`, as Terraform users expect them, planned and applied on a SQLite store.
@Suite("Destroy and --target")
struct DestroyAndTargetTests {
    static let trips = """
        sharelane: 1
        name: trips
        owner: alice
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
          carol: { email: carol@example.com }
        zones:
          Lists:
            share: { participants: { bob: read-write, carol: read-only } }
            records:
              groceries: { type: TodoList, fields: { title: Groceries } }
          Trips:
            records:
              italy:
                type: Group
                fields: { name: Italy }
                share: { participants: { bob: read-only } }
                children:
                  hotel: { type: Cost, fields: { amount: 420.5, check: { ref: receipt, action: validate } } }
              receipt: { type: Receipt }
        public:
          records:
            card: { type: Card, fields: { name: Alice } }
        """

    static func plan(_ recipe: Recipe, _ store: any Store, _ options: PlanOptions = PlanOptions()) async throws -> Plan
    {
        try await Planner(store: store, logger: quietLogger).plan(recipe, options: options)
    }

    static func apply(_ plan: Plan, _ store: any Store) async throws {
        let report = try await Applier(store: store, logger: quietLogger).apply(plan)
        #expect(report.failures == [], "\(report.failures.map(\.description))")
    }

    static func addresses(_ plan: Plan) -> [String] { plan.changes.map { "\($0.symbol) \($0.address)" } }

    @Test("destroy removes the declared zones (undeclared records counted) and public records; a plan then adds all")
    func destroyRemovesWhatTheRecipeOwns() async throws {
        let store = try freshStore()
        let recipe = try PromiseTests.load(Self.trips)
        let full = try await Self.plan(recipe, store)
        try await Self.apply(full, store)
        // A record the recipe does not declare, made behind its back, goes with its zone.
        let alice = try #require(try await store.signInExisting(email: "alice@example.com"))
        _ = try await store.modifyRecords(
            [
                RecordOperation(
                    .create, Record(recordName: "extra", recordType: "Note", zoneID: ZoneID(zoneName: "Lists")))
            ],
            in: ZoneID(zoneName: "Lists"), database: .private, atomic: true, as: alice.recordName)

        let destroy = try await Self.plan(recipe, store, PlanOptions(destroy: true))
        #expect(Self.addresses(destroy) == ["- record (public)/card", "- zone Lists", "- zone Trips"])
        #expect(destroy.summary.line == "Plan: 0 to add, 0 to change, 3 to destroy.")
        #expect(
            destroy.notes.contains { $0.hasPrefix("1 undeclared record in Lists goes with the zone: ") },
            "\(destroy.notes)")
        try await Self.apply(destroy, store)

        let again = try await Self.plan(recipe, store)
        #expect(again.summary == full.summary, "after destroy, the plan adds everything again")
        #expect(try await Self.plan(recipe, store, PlanOptions(destroy: true)).changes.isEmpty)
        // Users stay: destroy removes what the recipe declares and owns, not the people.
        #expect(try await store.signInExisting(email: "bob@example.com") != nil)
    }

    @Test("--target keeps the record and what it needs: its zone, its parent and its VALIDATE target")
    func targetKeepsWhatARecordNeeds() async throws {
        let store = try freshStore()
        let recipe = try PromiseTests.load(Self.trips)
        let plan = try await Self.plan(recipe, store, PlanOptions(targets: ["record Trips/hotel"]))
        // The plan's order: the zone, then records as the recipe declares them, each after what it needs.
        #expect(
            Self.addresses(plan) == [
                "+ zone Trips", "+ record Trips/italy", "+ record Trips/receipt", "+ record Trips/hotel",
            ], "\(Self.addresses(plan))")
        #expect(plan.notes.contains { $0.hasPrefix("Resource targeting is in effect") })
        try await Self.apply(plan, store)
        // The rest of the recipe is still to do, and a plan without --target shows it.
        let rest = try await Self.plan(recipe, store)
        #expect(!Self.addresses(rest).contains { $0.hasPrefix("+ record Trips/hotel") || $0 == "+ zone Trips" })
        #expect(Self.addresses(rest).contains("+ zone Lists"))
        #expect(Self.addresses(rest).contains("+ share Trips/italy"))
    }

    @Test("a participant target brings its share and the share's other participant changes: a share is saved whole")
    func participantTargetBringsItsShare() async throws {
        let store = try freshStore()
        let recipe = try PromiseTests.load(Self.trips)
        let plan = try await Self.plan(recipe, store, PlanOptions(targets: ["participant.Lists/bob"]))
        #expect(
            Self.addresses(plan) == [
                "+ zone Lists", "+ share Lists", "+ participant Lists/bob", "+ participant Lists/carol",
            ], "\(Self.addresses(plan))")
        try await Self.apply(plan, store)
        let rest = try await Self.plan(recipe, store)
        #expect(
            !Self.addresses(rest).contains { $0.contains("Lists") && !$0.contains("groceries") },
            "\(Self.addresses(rest))")
    }

    @Test(
        "a declared target with nothing to change says so; one naming nothing declared, or not an address, is an error"
    )
    func targetsThatNameNothing() async throws {
        let store = try freshStore()
        let recipe = try PromiseTests.load(Self.trips)
        try await Self.apply(try await Self.plan(recipe, store), store)
        let plan = try await Self.plan(recipe, store, PlanOptions(targets: ["zone Lists"]))
        #expect(plan.changes.isEmpty)
        #expect(plan.notes.contains("--target 'zone Lists' names nothing this plan changes."))
        await #expect {
            _ = try await Self.plan(recipe, store, PlanOptions(targets: ["zone List"]))
        } throws: { error in
            "\(error)".hasPrefix("--target 'zone List' names nothing the recipe declares; did you mean 'zone Lists'?")
        }
        await #expect {
            _ = try await Self.plan(recipe, store, PlanOptions(targets: ["thing x"]))
        } throws: { error in
            "\(error)".contains("--target 'thing x' is not an address") && "\(error)".contains("record.Trips/italy")
        }
    }
}
