import Applier
import Foundation
import PlanModel
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport
import Testing

/// A recipe whose zones have several owners, planned and applied on a real SQLite store: each zone in its
/// owner's private database, written as that owner, and nothing in anyone else's.
@Suite("Recipes with several owners")
struct SeveralOwnersTests {
    /// Three owners sharing in a cycle: Alice → Bob, Bob → Carol, Carol → Alice.
    static let cycle = """
        sharelane: 1
        name: cycle
        owner: alice
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
          carol: { email: carol@example.com }
        zones:
          Groceries:
            share: { participants: { bob: read-write } }
            records:
              milk: { type: Item, fields: { title: Milk } }
          Trip:
            owner: bob
            share: { participants: { carol: read-only } }
            records:
              rome: { type: Item, fields: { title: Rome } }
          Kitchen:
            owner: carol
            records:
              soup:
                type: Recipe
                fields: { title: Soup }
                share: { participants: { alice: read-write } }
        public:
          records:
            card: { type: Card, fields: { name: Alice } }
        """

    static func planner(_ store: any Store) -> Planner { Planner(store: store, logger: quietLogger) }

    /// What every user of the cycle sees, in each of their databases, and the public records.
    static func contents(_ store: any Store) async throws -> StoreContents {
        var users: [(handle: String, recordName: UserRecordName)] = []
        for handle in ["alice", "bob", "carol"] {
            if let user = try await store.signInExisting(email: "\(handle)@example.com") {
                users.append((handle, user.recordName))
            }
        }
        return try await StoreContents.read(store, users: users, publicRecords: ["card"])
    }

    static func apply(_ plan: Plan, _ store: any Store) async throws {
        let report = try await Applier(store: store, logger: quietLogger).apply(plan)
        #expect(report.failures == [], "\(report.failures.map(\.description))")
    }

    /// The names of the zones in `handle`'s private database, the default zone left out.
    static func privateZones(of handle: String, in store: any Store) async throws -> [String] {
        let user = try #require(try await store.signInExisting(email: "\(handle)@example.com"))
        return try await store.listZones(in: .private, as: user.recordName).map(\.zoneID.zoneName)
            .filter { $0 != defaultZoneName }.sorted()
    }

    @Test("three owners sharing in a cycle: plan, apply, each zone in its owner's database, then nothing to do")
    func aCyclePlansAppliesAndPlansEmpty() async throws {
        let store = try freshStore()
        let recipe = try PromiseTests.load(Self.cycle)
        let plan = try await Self.planner(store).plan(recipe)
        #expect(plan.owner.handle == "alice")
        #expect(plan.zoneOwners == ["Trip": "bob", "Kitchen": "carol"])
        #expect(plan.owners == ["alice", "bob", "carol"])
        // Three zones, each with a record, a share and a participant, and the public card.
        #expect(plan.summary.add == 13)
        try await Self.apply(plan, store)

        #expect(try await Self.privateZones(of: "alice", in: store) == ["Groceries"])
        #expect(try await Self.privateZones(of: "bob", in: store) == ["Trip"])
        #expect(try await Self.privateZones(of: "carol", in: store) == ["Kitchen"])
        // Each share reaches its participant through their shared database, owned by the zone's owner.
        let carol = try #require(try await store.signInExisting(email: "carol@example.com"))
        let bob = try #require(try await store.signInExisting(email: "bob@example.com"))
        let carolShared = try await store.listZones(in: .shared, as: carol.recordName)
        #expect(carolShared.map(\.zoneID) == [ZoneID(zoneName: "Trip", ownerRecordName: bob.recordName)])

        let again = try await Self.planner(store).plan(recipe)
        #expect(again.changes.isEmpty, "\(again.changes.map(\.address))")
        #expect(again.isEmpty)
    }

    @Test("a second apply of the same plan's recipe changes nothing, and a plan reads no other owner's database")
    func aSecondApplyChangesNothing() async throws {
        let store = try freshStore()
        let recipe = try PromiseTests.load(Self.cycle)
        try await Self.apply(try await Self.planner(store).plan(recipe), store)
        let before = try await Self.contents(store)
        let plan = try await Self.planner(store).plan(recipe)
        try await Self.apply(plan, store)
        #expect(try await Self.contents(store) == before)
    }

    @Test("a zone given to another owner is made in theirs; the former owner's copy is kept, and the plan says so")
    func aZoneGivenToAnotherOwnerKeepsTheFormerCopy() async throws {
        let store = try freshStore()
        // Carol also keeps a pantry, so she still owns a zone of the recipe after her kitchen goes to Bob.
        let withPantry = Self.cycle.replacingOccurrences(
            of: "public:\n", with: "  Pantry:\n    owner: carol\n    records:\n      salt: { type: Item }\npublic:\n")
        try await Self.apply(try await Self.planner(store).plan(try PromiseTests.load(withPantry)), store)
        let moved = withPantry.replacingOccurrences(
            of: "  Kitchen:\n    owner: carol\n", with: "  Kitchen:\n    owner: bob\n")
        let plan = try await Self.planner(store).plan(try PromiseTests.load(moved))
        #expect(plan.zoneOwners?["Kitchen"] == "bob")
        #expect(plan.changes.contains { $0.address == "zone Kitchen" && $0.action == .create })
        #expect(plan.changes.allSatisfy { $0.action == .create }, "nothing of Carol's is deleted: \(plan.changes)")
        let note = "carol's private database also holds a zone Kitchen, which the recipe puts in bob's"
        #expect(plan.notes.contains { $0.hasPrefix(note) }, "\(plan.notes)")
        #expect(TextPlanRenderer().render(plan).contains(note))
        try await Self.apply(plan, store)
        #expect(try await Self.privateZones(of: "bob", in: store) == ["Kitchen", "Trip"])
        #expect(try await Self.privateZones(of: "carol", in: store) == ["Kitchen", "Pantry"])
        // The next plan changes nothing and still says where the former copy is.
        let after = try await Self.planner(store).plan(try PromiseTests.load(moved))
        #expect(after.isEmpty)
        #expect(after.notes.contains { $0.hasPrefix(note) })
        // Deleted as it says, the note goes.
        let carolsOwn = """
            sharelane: 1
            name: carols-kitchen
            owner: carol
            users:
              carol: { email: carol@example.com }
            zones:
              Kitchen: { absent: true }
            """
        try await Self.apply(try await Self.planner(store).plan(try PromiseTests.load(carolsOwn)), store)
        #expect(try await Self.privateZones(of: "carol", in: store) == ["Pantry"])
        #expect(try await Self.privateZones(of: "bob", in: store) == ["Kitchen", "Trip"])
        let last = try await Self.planner(store).plan(try PromiseTests.load(moved))
        #expect(last.isEmpty)
        #expect(!last.notes.contains { $0.hasPrefix(note) }, "\(last.notes)")
        // The recipe's owner, left with no zone, has hers listed too.
        let groceriesMoved = moved.replacingOccurrences(of: "  Groceries:\n", with: "  Groceries:\n    owner: carol\n")
        let notes = try await Self.planner(store).plan(try PromiseTests.load(groceriesMoved)).notes
        #expect(
            notes.contains {
                $0.hasPrefix("alice's private database also holds a zone Groceries, which the recipe puts in carol's")
            }, "\(notes)")
    }

    @Test("the text plan lists each owner's changes under their name; one owner's plan reads as it always did")
    func theTextPlanNamesEachOwner() async throws {
        let store = try freshStore()
        let text = TextPlanRenderer().render(try await Self.planner(store).plan(try PromiseTests.load(Self.cycle)))
        #expect(text.contains("for recipe cycle, each zone as its owner:"))
        let headings = text.split(separator: "\n").filter {
            $0.hasSuffix("'s private database, as \($0.prefix { $0 != "'" }):")
        }
        #expect(
            headings == [
                "alice's private database, as alice:", "bob's private database, as bob:",
                "carol's private database, as carol:",
            ])
        let oneOwner = Self.cycle.replacingOccurrences(of: "    owner: bob\n", with: "")
            .replacingOccurrences(of: "    owner: carol\n", with: "")
            .replacingOccurrences(
                of: "{ participants: { alice: read-write } }", with: "{ participants: { bob: read-write } }")
        let single = TextPlanRenderer().render(
            try await Self.planner(try freshStore()).plan(try PromiseTests.load(oneOwner)))
        #expect(single.contains("for recipe cycle as alice:"))
        #expect(!single.contains("private database, as"))
        let json = JSONPlanRenderer().render(try await Self.planner(store).plan(try PromiseTests.load(Self.cycle)))
        #expect(json.contains("\"zone_owners\" : {"))
        #expect(json.contains("\"Trip\" : \"bob\""))
        #expect(
            !JSONPlanRenderer().render(try await Self.planner(try freshStore()).plan(try PromiseTests.load(oneOwner)))
                .contains("zone_owners"))
    }

    @Test("a saved plan keeps each zone's owner, applies exactly, and is refused when another owner's zone changed")
    func aSavedPlanKeepsTheOwners() async throws {
        let store = try freshStore()
        let recipe = try PromiseTests.load(Self.cycle)
        let plan = try await Self.planner(store).plan(recipe)
        let saved = try SavedPlan.decoded(SavedPlan.encoded(plan))
        #expect(saved.zoneOwners == plan.zoneOwners)
        let report = try await Applier(store: store, logger: quietLogger).applySaved(saved)
        #expect(report.failures == [])
        #expect(try await Self.planner(store).plan(recipe).changes.isEmpty)

        // A change in Bob's zone, behind the plan's back, makes a plan saved before it stale.
        var edited = recipe
        let trip = try #require(edited.zones.firstIndex { $0.name == "Trip" })
        edited.zones[trip].records[0].fields["title"] = .value(.string("Rome in May"))
        let pending = try SavedPlan.decoded(SavedPlan.encoded(try await Self.planner(store).plan(edited)))
        let bob = try #require(try await store.signInExisting(email: "bob@example.com"))
        _ = try await store.modifyRecords(
            [
                RecordOperation(
                    .forceUpdate,
                    Record(
                        recordName: "rome", recordType: "Item", zoneID: ZoneID(zoneName: "Trip"),
                        fields: ["note": .string("behind the plan")]))
            ], in: ZoneID(zoneName: "Trip"), database: .private, atomic: true, as: bob.recordName)
        let before = try await Self.contents(store)
        await #expect {
            _ = try await Applier(store: store, logger: quietLogger).applySaved(pending)
        } throws: { error in
            guard case PlannerError.stalePlan(let changes) = error else { return false }
            return changes.contains { $0.hasPrefix("record Trip/rome changed") }
        }
        #expect(try await Self.contents(store) == before)
    }

    @Test("export writes every owner's zones with their owner:, and the export plans to nothing")
    func anExportOfEveryOwnerPlansEmpty() async throws {
        let store = try freshStore()
        let recipe = try PromiseTests.load(Self.cycle)
        try await Self.apply(try await Self.planner(store).plan(recipe), store)
        func user(_ handle: String) async throws -> User {
            try #require(try await store.signInExisting(email: "\(handle)@example.com"))
        }
        let text = try await Exporter(store: store, logger: quietLogger).export(
            owner: try await user("alice"), otherOwners: [try await user("bob"), try await user("carol")],
            name: "exported")
        #expect(text.contains("  Trip:\n    owner: bob\n"))
        #expect(text.contains("  Kitchen:\n    owner: carol\n"))
        let exported = try PromiseTests.load(text)
        #expect(exported.owners == ["alice", "bob", "carol"])
        let plan = try await Self.planner(store).plan(exported)
        #expect(plan.changes.isEmpty, "\(plan.changes.map(\.address))\n\(text)")
    }

    @Test("two owners' zones of one name are refused by export, naming both; --owner exports each")
    func twoOwnersOfOneZoneNameAreRefused() async throws {
        let store = try freshStore()
        let alice = try await store.signIn(email: "alice@example.com", name: nil)
        let bob = try await store.signIn(email: "bob@example.com", name: nil)
        for user in [alice, bob] {
            _ = try await store.modifyZones(
                [ZoneOperation(.create, ZoneID(zoneName: "Lists"))], in: .private, as: user.recordName)
        }
        await #expect {
            _ = try await Exporter(store: store, logger: quietLogger).export(owner: alice, otherOwners: [bob])
        } throws: { error in
            let text = "\(error)"
            return text.contains("alice@example.com") && text.contains("bob@example.com")
                && text.contains("export one owner with --owner")
        }
        let alone = try await Exporter(store: store, logger: quietLogger).export(owner: bob)
        #expect(alone.contains("  Lists:"))
    }

    @Test("--target and --zone reach the part of the zone's owner, and destroy removes every owner's zones")
    func targetZoneAndDestroyFollowTheOwners() async throws {
        let store = try freshStore()
        let recipe = try PromiseTests.load(Self.cycle)
        let targeted = try await Self.planner(store).plan(recipe, options: PlanOptions(targets: ["record Trip/rome"]))
        #expect(targeted.changes.map(\.address) == ["zone Trip", "record Trip/rome"])
        #expect(targeted.owner.handle == "bob")
        try await Self.apply(targeted, store)
        #expect(try await Self.privateZones(of: "bob", in: store) == ["Trip"])
        #expect(try await Self.privateZones(of: "alice", in: store) == [])

        let zoned = try await Self.planner(store).plan(recipe, options: PlanOptions(onlyZones: ["Kitchen"]))
        #expect(Set(zoned.changes.map(\.zoneName)) == ["Kitchen"])

        try await Self.apply(try await Self.planner(store).plan(recipe), store)
        let destroy = try await Self.planner(store).plan(recipe, options: PlanOptions(destroy: true))
        #expect(
            destroy.changes.filter { $0.kind == .zone }.map(\.address) == [
                "zone Groceries", "zone Trip", "zone Kitchen",
            ])
        try await Self.apply(destroy, store)
        for handle in ["alice", "bob", "carol"] {
            #expect(try await Self.privateZones(of: handle, in: store) == [])
        }
    }
}
