import Foundation
import Recipe
import ShareKit
import SharelaneTestSupport
import Testing

@testable import Applier
@testable import PlanModel
@testable import Planner

/// Zones planned on every core: a plan of a store that does not have the owner yet adds each zone
/// to a builder of its own (`PlanBuilder.eachAlone`) and joins them in the recipe's order, which must plan
/// exactly as adding the zones one after another.
@Suite("Zones planned alone")
struct PlanBuilderAloneTests {
    /// Zones that give every kind of change a new store plans: zones, records whose parent and `VALIDATE`
    /// target are declared after them, a zone-wide share, a hierarchy share, participants, an absent record.
    static let recipe = """
        sharelane: 1
        name: alone
        owner: alice
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
          carol: { email: carol@example.com }
        zones:
          Lists:
            share: { participants: { bob: read-write, carol: read-only } }
            records:
              milk: { type: Todo, parent: groceries, fields: { title: Milk, list: { ref: groceries, action: validate } } }
              groceries: { type: TodoList, fields: { title: Groceries } }
              old: { type: Todo, absent: true }
          Trips:
            records:
              italy:
                type: Group
                fields: { name: Italy, days: 9, budget: 1200.5 }
                share: { title: Italy, participants: { carol: read-write } }
              rome: { type: Stop, parent: italy, fields: { name: Rome } }
          Quiet:
            records:
              note: { type: Note, fields: { text: "Nothing shared" } }
        """

    /// A builder of a store that has none of the recipe's users yet, or, for a store that acts only as its
    /// owner (which finds the others by email), has them all; `leaving` out of the directory.
    static func builder(_ recipe: Recipe, actsAsAnyUser: Bool, leaving: String? = nil) -> PlanBuilder {
        let entries = recipe.users.filter { $0.handle != leaving }.map {
            UserDirectory.Entry(
                handle: $0.handle, email: $0.email, name: $0.name, recordName: actsAsAnyUser ? nil : "_\($0.handle)")
        }
        return PlanBuilder(
            recipe: recipe, users: UserDirectory(entries: entries, ownerHandle: recipe.owner),
            live: LiveState(zones: [:], publicRecords: [:], storeCalls: 0), actsAsAnyUser: actsAsAnyUser,
            prune: false)
    }

    @Test("zones added alone and joined in order plan as zones added one after another", arguments: [true, false])
    func joinedAsAddedInTurn(actsAsAnyUser: Bool) throws {
        let recipe = try PromiseTests.load(Self.recipe)
        var inTurn = Self.builder(recipe, actsAsAnyUser: actsAsAnyUser)
        for zone in recipe.zones { try inTurn.add(zone) }
        var joined = Self.builder(recipe, actsAsAnyUser: actsAsAnyUser)
        for alone in joined.eachAlone(recipe.zones[...]) { joined.append(try alone.get()) }
        #expect(joined.changeCount == inTurn.changeCount)
        #expect(joined.notes == inTurn.notes)
        #expect(joined.waiting == inTurn.waiting)
        let expected = inTurn.takeOrderedChanges()
        #expect(joined.takeOrderedChanges() == expected)
        // The recipe plans what the test is about: every zone, share and participant, the parent first.
        let addresses = expected.map(\.address)
        #expect(addresses.filter { $0.hasPrefix("zone ") } == ["zone Lists", "zone Trips", "zone Quiet"])
        #expect(addresses.firstIndex(of: "record Lists/groceries")! < addresses.firstIndex(of: "record Lists/milk")!)
        #expect(addresses.contains("share Trips/italy") && addresses.contains("participant Trips/italy/carol"))
        if !actsAsAnyUser {
            #expect(joined.waiting.count == 3, "bob and carol in Lists, carol in Trips: \(joined.waiting)")
        }
    }

    @Test("a zone that cannot be planned gives its error, and the others plan as they would")
    func aZoneThatCannotBePlanned() throws {
        let recipe = try PromiseTests.load(Self.recipe)
        // A directory without bob: the zone shared with him cannot be planned.
        var inTurn = Self.builder(recipe, actsAsAnyUser: true, leaving: "bob")
        #expect(throws: PlannerError.self) { try inTurn.add(recipe.zones[0]) }
        let results = inTurn.eachAlone(recipe.zones[...])
        #expect(results.count == 3)
        guard case .failure(let error) = results[0] else {
            Issue.record("Lists planned without bob in the directory")
            return
        }
        #expect("\(error)".contains("bob"), "\(error)")
        var fresh = Self.builder(recipe, actsAsAnyUser: true, leaving: "bob")
        try fresh.add(recipe.zones[1])
        try fresh.add(recipe.zones[2])
        var joined = Self.builder(recipe, actsAsAnyUser: true, leaving: "bob")
        for result in results.dropFirst() { joined.append(try result.get()) }
        #expect(joined.takeOrderedChanges() == fresh.takeOrderedChanges())
    }
}
