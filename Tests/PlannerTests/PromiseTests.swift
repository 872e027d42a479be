import Applier
import Foundation
import PlanModel
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite
import Testing

/// Regression tests for promises a new user found broken: each test is named after the behaviour it holds.
@Suite("Promises: plan, apply, apply again")
struct PromiseTests {
    static func load(_ yaml: String) throws -> Recipe {
        try RecipeLoader(environment: [:], overrides: [:]).load(yaml: yaml, file: "promise.yaml")
    }

    /// Plans and applies `recipe`, failing the test on any refused change; returns the plan applied.
    @discardableResult
    static func apply(_ recipe: Recipe, to store: any Store) async throws -> Plan {
        let plan = try await Planner(store: store, logger: quietLogger).plan(recipe)
        let report = try await Applier(store: store, logger: quietLogger).apply(plan)
        #expect(
            report.failures == [], "the apply failed:\n\(report.failures.map(\.description).joined(separator: "\n"))")
        return plan
    }

    static func plan(_ recipe: Recipe, on store: any Store) async throws -> Plan {
        try await Planner(store: store, logger: quietLogger).plan(recipe)
    }

    static let topics = """
        sharelane: 1
        name: topics
        users:
          alice: { email: alice@example.com }
          carol: { email: carol@example.com }
        owner: alice
        zones:
          Topics:
            share:
              participants: { carol: read-only }
            records:
              t1: { type: Topic, fields: { title: One } }
        """

    @Test("a participant who left is invited again by the next apply, and the plan after it shows no changes")
    func participantWhoLeftIsInvitedAgain() async throws {
        let store = try freshStore()
        let recipe = try Self.load(Self.topics)
        try await Self.apply(recipe, to: store)
        let carol = try #require(try await store.signInExisting(email: "carol@example.com"))
        let alice = try #require(try await store.signInExisting(email: "alice@example.com"))
        try await store.leaveShare(
            recordName: zoneShareRecordName, in: ZoneID(zoneName: "Topics", ownerRecordName: alice.recordName),
            as: carol.recordName)

        let plan = try await Self.plan(recipe, on: store)
        #expect(plan.changes.map { "\($0.symbol) \($0.address)" } == ["~ participant Topics/carol"])
        let status = try #require(plan.changes.first?.attributes.first { $0.name == "status" })
        #expect(status.before == .text("left"))
        #expect(status.after == .text("invited again, accepted"))
        #expect(plan.notes.contains { $0.contains("carol left the share; apply invites carol again") })
        let text = TextPlanRenderer().render(plan)
        #expect(text.contains("status: left → invited again, accepted"))

        try await Self.apply(recipe, to: store)
        #expect(try await Self.plan(recipe, on: store).changes == [])
        let zones = try await store.listZones(in: .shared, as: carol.recordName)
        #expect(zones.map(\.zoneID.zoneName) == ["Topics"], "carol sees the zone again after accepting")
    }

    @Test("a participant who left and is not declared accepted is invited again and left pending")
    func participantWhoLeftIsInvitedAgainPending() async throws {
        let store = try freshStore()
        let recipe = try Self.load(
            Self.topics.replacingOccurrences(
                of: "carol: read-only", with: "carol: { permission: read-write, accepted: false }"))
        try await Self.apply(recipe, to: store)
        let alice = try #require(try await store.signInExisting(email: "alice@example.com"))
        let carol = try #require(try await store.signInExisting(email: "carol@example.com"))
        let share = try await store.lookupRecords(
            [zoneShareRecordName], in: ZoneID(zoneName: "Topics"), database: .private, as: alice.recordName)
        guard case .savedShare(let live)? = share.first else { Issue.record("no share"); return }
        _ = try await store.acceptShare(url: try #require(live.url), as: carol.recordName)
        try await store.leaveShare(
            recordName: zoneShareRecordName, in: ZoneID(zoneName: "Topics", ownerRecordName: alice.recordName),
            as: carol.recordName)
        let plan = try await Self.plan(recipe, on: store)
        #expect(plan.changes.first?.attributes.first { $0.name == "status" }?.after == .text("invited again"))
        try await Self.apply(recipe, to: store)
        #expect(try await Self.plan(recipe, on: store).changes == [])
        let after = try await store.lookupRecords(
            [zoneShareRecordName], in: ZoneID(zoneName: "Topics"), database: .private, as: alice.recordName)
        guard case .savedShare(let invited)? = after.first else { Issue.record("no share"); return }
        #expect(invited.participant(carol.recordName)?.acceptance == .pending)
    }

    @Test("a VALIDATE reference to a record declared further down succeeds on the first apply")
    func validateReferenceToALaterRecord() async throws {
        let store = try freshStore()
        let recipe = try Self.load(
            """
            sharelane: 1
            name: fasting
            users: { alice: { email: alice@example.com } }
            zones:
              Fasting:
                records:
                  f1: { type: Fast, fields: { next: { ref: f2, action: validate } } }
                  f2: { type: Fast, fields: { n: 2 } }
            public:
              records:
                p1: { type: Card, fields: { other: { ref: p2, action: validate } } }
                p2: { type: Card, fields: { n: 1 } }
            """)
        let plan = try await Self.apply(recipe, to: store)
        #expect(plan.summary.add == 5)
        #expect(try await Self.plan(recipe, on: store).changes == [])
    }

    @Test("share: none on a hierarchy root with absent: true on its child applies in one go")
    func stopSharingAndDeleteAChild() async throws {
        let store = try freshStore()
        let shared = """
            sharelane: 1
            name: trips
            users: { alice: { email: alice@example.com }, bob: { email: bob@example.com } }
            owner: alice
            zones:
              Trips:
                records:
                  italy:
                    type: Group
                    share: SHARE
                    children:
                      hotel: { type: Cost, ABSENT fields: { amount: 420.5 } }
                      day: { type: Day, fields: { n: 1 } }
            """
        try await Self.apply(
            try Self.load(
                shared.replacingOccurrences(of: "SHARE", with: "{ participants: { bob: read-only } }")
                    .replacingOccurrences(of: "ABSENT", with: "")), to: store)
        let stopped = try Self.load(
            shared.replacingOccurrences(of: "SHARE", with: "none").replacingOccurrences(
                of: "ABSENT", with: "absent: true,"))
        let plan = try await Self.apply(stopped, to: store)
        #expect(plan.summary.destroy == 2)
        #expect(try await Self.plan(stopped, on: store).changes == [])
    }

    @Test("a record moved into a shared hierarchy and a change to its child apply in one go")
    func moveIntoAHierarchyAndChangeTheChild() async throws {
        let store = try freshStore()
        let recipe = """
            sharelane: 1
            name: notes
            users: { alice: { email: alice@example.com }, bob: { email: bob@example.com } }
            owner: alice
            zones:
              Notes:
                records:
                  shared: { type: Folder, share: { participants: { bob: read-write } } }
                  loose: { type: Note, PARENT fields: { n: N } }
                  leaf: { type: Note, parent: loose, fields: { n: N } }
            """
        try await Self.apply(
            try Self.load(
                recipe.replacingOccurrences(of: "PARENT", with: "").replacingOccurrences(of: "N }", with: "1 }")),
            to: store)
        let moved = try Self.load(
            recipe.replacingOccurrences(of: "PARENT", with: "parent: shared,").replacingOccurrences(
                of: "N }", with: "2 }"))
        try await Self.apply(moved, to: store)
        #expect(try await Self.plan(moved, on: store).changes == [])
    }

    @Test("a plan on a fresh store creates no users; the apply creates them all")
    func planCreatesNoUsers() async throws {
        let store = try freshStore()
        let recipe = SampleRecipes.family()
        let plan = try await Self.plan(recipe, on: store)
        #expect(plan.summary.add > 0)
        #expect(try await store.allUsers() == [], "planning signed users in")
        #expect(
            try await store.listZones(in: .private, as: StableName.userRecordName(email: "alice@example.com")).map(
                \.zoneID.zoneName) == [defaultZoneName])
        try await Self.apply(recipe, to: store)
        let users = try await store.allUsers()
        #expect(
            users.map(\.email) == ["alice@example.com", "bob@example.com", "carol@example.com", "dana@example.com"])
        #expect(users.first?.name == "Alice Appleseed")
        #expect(try await Self.plan(recipe, on: store).changes == [])
    }

    @Test("a saved plan made before the owner existed is refused once someone else created the owner")
    func savedPlanBeforeTheOwnerExisted() async throws {
        let store = try freshStore()
        let recipe = SampleRecipes.family()
        let early = try await Self.plan(recipe, on: store)
        try await Self.apply(recipe, to: store)
        await #expect(throws: PlannerError.self) {
            _ = try await Applier(store: store, logger: quietLogger).applySaved(early)
        }
        #expect(try await Self.plan(recipe, on: store).changes == [])
    }

    /// The URL of the zone-wide share of `zone`, as the owner sees it.
    static func shareURL(_ zone: String, in store: SQLiteStore) async throws -> String? {
        let alice = try #require(try await store.signInExisting(email: "alice@example.com"))
        let outcomes = try await store.lookupRecords(
            [zoneShareRecordName], in: ZoneID(zoneName: zone), database: .private, as: alice.recordName)
        if case .savedShare(let share)? = outcomes.first { return share.url }
        return nil
    }

    @Test("a share's URL is random: the same recipe on two fresh stores gives two URLs, each kept across changes")
    func shareURLsCannotBeGuessed() async throws {
        let recipe = try Self.load(Self.topics)
        let first = try freshStore()
        let second = try freshStore()
        try await Self.apply(recipe, to: first)
        try await Self.apply(recipe, to: second)
        let url = try #require(try await Self.shareURL("Topics", in: first))
        #expect(url != (try await Self.shareURL("Topics", in: second)))
        let changed = try Self.load(
            Self.topics.replacingOccurrences(of: "share:", with: "share:\n      title: Renamed"))
        let plan = try await Self.apply(changed, to: first)
        #expect(plan.summary.change == 1)
        #expect(try await Self.shareURL("Topics", in: first) == url, "the URL changed with the share's title")
    }

    @Test("stable_url: true gives the same share URL on every fresh store, for demo data")
    func stableShareURL() async throws {
        let recipe = try Self.load(
            Self.topics.replacingOccurrences(of: "share:", with: "share:\n      stable_url: true"))
        let first = try freshStore()
        let second = try freshStore()
        try await Self.apply(recipe, to: first)
        try await Self.apply(recipe, to: second)
        let url = try #require(try await Self.shareURL("Topics", in: first))
        #expect(url == (try await Self.shareURL("Topics", in: second)))
        #expect(try await Self.plan(recipe, on: first).changes == [])
    }

    @Test(
        "the owner deleting a shared hierarchy's root behind the recipe's back: apply makes both again, and the plan settles"
    )
    func ownerDeletesTheRootOfAShare() async throws {
        let store = try freshStore()
        let recipe = try Self.load(
            """
            sharelane: 1
            name: trips
            users: { alice: { email: alice@example.com }, bob: { email: bob@example.com } }
            owner: alice
            zones:
              Trips:
                records:
                  italy: { type: Group, share: { participants: { bob: read-only } } }
            """)
        try await Self.apply(recipe, to: store)
        let alice = try #require(try await store.signInExisting(email: "alice@example.com"))
        let deleted = try await store.modifyRecords(
            [
                RecordOperation(
                    .forceDelete, Record(recordName: "italy", recordType: "", zoneID: ZoneID(zoneName: "Trips")))
            ],
            in: ZoneID(zoneName: "Trips"), database: .private, atomic: true, as: alice.recordName)
        #expect(deleted.first?.error == nil)
        let plan = try await Self.apply(recipe, to: store)
        #expect(
            plan.changes.map { "\($0.symbol) \($0.address)" }.prefix(2) == [
                "+ record Trips/italy", "+ share Trips/italy",
            ])
        let again = try await Self.plan(recipe, on: store)
        #expect(again.changes == [], "\(TextPlanRenderer().render(again))")
    }

    @Test("an update is written after the record its kept VALIDATE reference needs, when the plan makes it again")
    func updateWaitsForTheValidateTargetItKeeps() async throws {
        let store = try freshStore()
        let yaml = """
            sharelane: 1
            name: validate-kept
            users: { alice: { email: alice@example.com } }
            zones:
              Z1:
                records:
                  r4: { type: Task, fields: { f2: { ref: r8, action: validate } } }
                  r8: { type: Item }
            """
        try await Self.apply(try Self.load(yaml), to: store)
        // r8 is deleted behind the recipe's back; the recipe then changes another field of r4.
        let alice = try #require(try await store.signInExisting(email: "alice@example.com")).recordName
        _ = try await store.modifyRecords(
            [
                RecordOperation(
                    .forceDelete, Record(recordName: "r8", recordType: "Item", zoneID: ZoneID(zoneName: "Z1")))
            ],
            in: ZoneID(zoneName: "Z1"), database: .private, atomic: true, as: alice)
        let edited = try Self.load(
            yaml.replacingOccurrences(of: "action: validate } }", with: "action: validate }, f1: 1 }"))
        let plan = try await Self.apply(edited, to: store)
        #expect(plan.changes.map { "\($0.symbol) \($0.address)" } == ["+ record Z1/r8", "~ record Z1/r4"])
        #expect(try await Self.plan(edited, on: store).changes.isEmpty)
    }
}
