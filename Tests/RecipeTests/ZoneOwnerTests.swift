import Recipe
import Testing

/// A zone's `owner:`: whose private database holds it, checked where it is written.
@Suite struct ZoneOwnerTests {
    static let users = """
        sharelane: 1
        name: owners
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
          carol: { email: carol@example.com }

        """

    @Test("a zone's owner: puts it in that user's private database; the others stay the recipe owner's")
    func aZoneNamesItsOwner() throws {
        let recipe = try RecipeLoader(environment: [:]).load(
            yaml: Self.users + """
                owner: alice
                zones:
                  Groceries: { share: { participants: { bob: read-write } } }
                  Trip: { owner: bob, share: { participants: { alice: read-only, carol: read-write } } }
                """, file: "owners.yaml")
        #expect(recipe.owner(ofZone: "Groceries") == "alice")
        #expect(recipe.owner(ofZone: "Trip") == "bob")
        #expect(recipe.owners == ["alice", "bob"])
        #expect(recipe.hasSeveralOwners)
    }

    @Test("a zone that names the recipe's owner is the same as one that names nobody")
    func namingTheRecipeOwnerChangesNothing() throws {
        let loader = RecipeLoader(environment: [:])
        let said = try loader.load(
            yaml: Self.users
                + "owner: alice\nzones:\n  Groceries: { owner: alice, records: { milk: { type: Item } } }\n",
            file: "owners.yaml")
        let unsaid = try loader.load(
            yaml: Self.users + "owner: alice\nzones:\n  Groceries: { records: { milk: { type: Item } } }\n",
            file: "owners.yaml")
        #expect(!said.hasSeveralOwners)
        #expect(said.zones.map(\.owner) == [nil])
        #expect(said.zones.map(\.name) == unsaid.zones.map(\.name))
        #expect(said.zones[0].records.map(\.name) == unsaid.zones[0].records.map(\.name))
        #expect(said.zones[0].records.map(\.type) == unsaid.zones[0].records.map(\.type))
    }

    @Test("without a recipe owner, every zone naming its owner is enough; the first zone's owner holds the rest")
    func everyZoneNamingItsOwnerNeedsNoRecipeOwner() throws {
        let recipe = try RecipeLoader(environment: [:]).load(
            yaml: Self.users + "zones:\n  Trip: { owner: bob }\n  Kitchen: { owner: carol }\n", file: "owners.yaml")
        #expect(recipe.owner == "bob")
        #expect(recipe.owners == ["bob", "carol"])
        let errors = loadErrors(yaml: Self.users + "zones:\n  Trip: { owner: bob }\n  Kitchen: {}\n")
        #expect(
            errors.map(\.message) == [
                "`owner:` is missing and there are 3 users; say whose private database holds the zones, e.g. `owner: alice`, or give each zone an `owner:`"
            ])
    }

    @Test("an owner who is not a user is refused at the owner: line, with the nearest handle")
    func anUnknownOwnerIsRefusedWhereItIsWritten() {
        let errors = loadErrors(yaml: Self.users + "owner: alice\nzones:\n  Trip:\n    owner: bobb\n")
        #expect(errors.count == 1)
        #expect(errors.first?.message.contains("`owner` `bobb` names no user; did you mean `bob`?") == true)
        #expect(errors.first?.location?.line == 10)
        #expect(errors.first?.location?.column == 12)
    }

    @Test("a zone's owner cannot take part in its own share, but the recipe's owner may take part in it")
    func theZoneOwnerIsNoParticipant() throws {
        let errors = loadErrors(
            yaml: Self.users
                + "owner: alice\nzones:\n  Trip: { owner: bob, share: { participants: { bob: read-only } } }\n")
        #expect(errors.map(\.message) == ["`bob` owns the share and cannot also be a participant"])
        let recipe = try RecipeLoader(environment: [:]).load(
            yaml: Self.users
                + "owner: alice\nzones:\n  Trip: { owner: bob, share: { participants: { alice: read-only } } }\n",
            file: "owners.yaml")
        #expect(recipe.zones[0].owner == "bob")
    }

    @Test("a !share-url names a share of the same owner's zones; another owner's is refused, saying what to do")
    func aShareURLStaysWithItsOwner() {
        let errors = loadErrors(
            yaml: Self.users + """
                owner: alice
                zones:
                  Groceries: { share: { participants: { bob: read-write } } }
                  Trip:
                    owner: bob
                    records:
                      rome: { type: Item, fields: { list: !share-url Groceries } }
                """)
        #expect(errors.count == 1)
        #expect(
            errors.first?.message.contains("names a share in alice's zone, but the field is in bob's zone `Trip`")
                == true)
        #expect(errors.first?.message.contains("${share_url:Groceries}") == true)
    }

    @Test("a private zone subscription is its zone owner's: another user's is refused")
    func aZoneIsWatchedByItsOwner() throws {
        let base = Self.users + "owner: alice\nzones:\n  Trip: { owner: bob }\nsubscriptions:\n"
        _ = try RecipeLoader(environment: [:]).load(
            yaml: base + "  - { as: bob, id: trip, type: zone, zone: Trip }\n", file: "owners.yaml")
        let errors = loadErrors(yaml: base + "  - { as: alice, id: trip, type: zone, zone: Trip }\n")
        #expect(errors.map(\.message).first?.contains("which is in bob's private database, not alice's") == true)
    }

    @Test("the recipe writer writes a zone's owner back, and the written recipe loads to the same owners")
    func theWriterKeepsTheOwner() throws {
        let recipe = try RecipeLoader(environment: [:]).load(
            yaml: Self.users + "owner: alice\nzones:\n  Groceries: {}\n  Trip: { owner: bob }\n", file: "owners.yaml")
        let text = RecipeWriter().yaml(recipe)
        #expect(text.contains("  Trip:\n    owner: bob\n"))
        let again = try RecipeLoader(environment: [:]).load(yaml: text, file: "written.yaml")
        #expect(again.zones.map { again.owner(of: $0) } == ["alice", "bob"])
    }
}
