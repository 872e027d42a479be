import Recipe
import ShareKit
import Testing

/// The recipes `sharelane init` writes, read back by the loader.
@Suite("Starter recipes")
struct StarterRecipeTests {
    func load(_ yaml: String) throws -> Recipe {
        try RecipeLoader(environment: [:]).load(yaml: yaml, file: "sharelane.yaml")
    }

    @Test("the starter loads with its name and container, however they are spelled, and its lane is the one it names")
    func starterLoads() throws {
        for (name, container) in [
            ("notes", "iCloud.com.example.Notes"), ("my: \"odd\" # name", "iCloud.local.sharelane"),
            ("yes", "iCloud.com.example.2024"),
        ] {
            let yaml = StarterRecipe.yaml(name: name, container: container)
            let recipe = try load(yaml)
            #expect(recipe.name == name)
            #expect(recipe.container == container)
            #expect(recipe.owner == "alice")
            #expect(recipe.lanes.map(\.name) == [StarterRecipe.laneName])
            #expect(yaml.contains("#   sharelane run \(StarterRecipe.laneName) "), "the header names the lane")
            let zone = try #require(recipe.zones.first)
            guard case .share(let share)? = zone.share else {
                Issue.record("the starter's zone is shared")
                return
            }
            #expect(share.participants.map(\.handle) == ["bob"])
        }
    }

    @Test("the check lane of an exported recipe counts each zone's records and reads as each accepted participant")
    func checkLane() throws {
        let exported = """
            sharelane: 1
            name: exported
            users: { alice: { email: a@example.com }, bob: { email: b@example.com }, dana: { email: d@example.com } }
            owner: alice
            zones:
              Lists:
                share: { participants: { bob: read-write, dana: { permission: read-only, accepted: false } } }
                records:
                  a: { type: T, fields: { n: 1 } }
                  gone: { type: T, absent: true }
              Trips:
                records:
                  italy: { type: Trip, share: { participants: { dana: read-only } }, children: { day: { type: Day } } }
            """
        let lane = StarterRecipe.checkLane(for: try load(exported))
        #expect(
            lane == """

                lanes:
                  check:
                    desc: Check that the store still holds what it held when this recipe was exported from it.
                    steps:
                      - expect: { records: 1, zone: Lists }
                      - expect: { as: bob, can: read, zone: Lists }
                      - expect: { records: 2, zone: Trips }
                      - expect: { as: dana, can: read, zone: Trips, record: italy }

                """)
        let withLane = try load(exported + lane)
        #expect(withLane.lanes.first?.steps.count == 4)

        let empty = try load("sharelane: 1\nname: e\nusers: { alice: { email: a@example.com } }\n")
        #expect(StarterRecipe.checkLane(for: empty).isEmpty, "a lane needs a step")
    }
}
