import Foundation
import SharelaneTestSupport
import Recipe
import ShareKit
import Testing

@Suite("Valid recipes")
struct ValidRecipeTests {
    @Test("the family-lists example (Recipes/sharelane.yaml, with an include) loads into the declared state")
    func specExample() throws {
        let recipe = try RecipeLoader(environment: [:]).load(path: try Fixtures.url("valid", "spec-example").path)
        #expect(recipe.name == "family-lists")
        #expect(recipe.container == "iCloud.com.example.Lists")
        #expect(recipe.seed == 42)
        #expect(recipe.owner == "alice")
        // The included file adds erin and its bob is overridden by the recipe.
        #expect(recipe.users.map(\.handle) == ["bob", "erin", "alice", "carol", "dana"])
        #expect(recipe.user("bob")?.name == "Bob Builder")
        #expect(recipe.user("alice")?.email == "alice@example.com")

        let lists = try #require(recipe.zone("FamilyLists"))
        guard case .share(let share) = lists.share else {
            Issue.record("FamilyLists declares a zone-wide share")
            return
        }
        #expect(share.title == "Family lists")
        #expect(share.publicPermission == .none)
        #expect(share.participants.map(\.handle) == ["bob", "dana"])
        #expect(share.participants[0].permission == .readWrite && share.participants[0].accepted == false)
        #expect(share.participants[1].permission == .readOnly && share.participants[1].accepted == true)
        #expect(lists.records.map(\.name) == ["groceries", "milk"])
        #expect(lists.records[1].parent == "groceries")
        #expect(lists.records[0].fields["created"] == .value(.timestamp(1_714_554_000_000)))
        #expect(lists.records[1].fields["done"] == .value(.int64(0)))
        #expect(lists.records[1].fields["qty"] == .value(.int64(2)))

        let trips = try #require(recipe.zone("Trips"))
        #expect(trips.prune)
        #expect(trips.share == nil)
        #expect(trips.records.count == 12)
        #expect(trips.records.map(\.name).prefix(3) == ["italy", "hotel", "day-1"])
        #expect(trips.records.last?.name == "day-10")
        #expect(trips.records.allSatisfy { $0.name == "italy" || $0.parent == "italy" })
        #expect(
            trips.records[0].fields["members"]
                == .value(.list(elementType: .string, [.string("alice"), .string("bob")])))
        #expect(trips.records[1].fields["amount"] == .value(.double(420.5)))
        #expect(trips.records[1].fields["trip"] == .value(.reference(Reference(recordName: "italy"))))
        #expect(trips.records[2].fields["title"] == .value(.string("Day 1")))
        if case .value(.timestamp) = trips.records[2].fields["when"] {
        } else {
            Issue.record("`{{fake.date}}` is a TIMESTAMP")
        }
        guard case .share(let italyShare) = trips.records[0].share else {
            Issue.record("italy roots a share")
            return
        }
        #expect(italyShare.publicPermission == .readOnly)

        #expect(recipe.publicRecords.first?.fields["privateShareURL"] == .shareURL(zone: "FamilyLists", record: nil))

        let demo = try #require(recipe.lane("demo"))
        #expect(demo.desc == "Provision the lists, then Bob accepts and adds an item.")
        #expect(
            demo.steps.map(\.action) == [
                .apply(prune: false, only: []),
                .accept(zone: "FamilyLists", record: nil),
                .save(
                    zone: "FamilyLists", record: "eggs", type: "Todo", parent: "groceries",
                    fields: ["title": .value(.string("Eggs"))]),
                .expect(.access(can: .read, zone: "FamilyLists", record: nil, toBe: false)),
            ])
        #expect(demo.steps.map(\.actor) == [nil, "bob", "bob", "carol"])
        #expect(demo.steps[1].location.line == 60)
    }

    @Test("--var overrides vars, and ${NAME:-default} falls back")
    func variables() throws {
        let yaml = """
            sharelane: 1
            name: vars
            vars: { who: alice }
            users:
              "${who}": { email: "${who}@example.com", name: "${DISPLAY:-Someone}" }
            zones:
              Z: { records: { r: { type: T, fields: { n: "${N:-7}", home: "${HOME_DIR}" } } } }
            """
        let loader = RecipeLoader(environment: ["HOME_DIR": "/home/x"], overrides: ["who": "ann"])
        let recipe = try loader.load(yaml: yaml, file: "vars.yaml")
        #expect(recipe.owner == "ann")
        #expect(recipe.users.first?.email == "ann@example.com")
        #expect(recipe.users.first?.name == "Someone")
        #expect(recipe.zones[0].records[0].fields["n"] == .value(.string("7")))
        #expect(recipe.zones[0].records[0].fields["home"] == .value(.string("/home/x")))
        #expect(recipe.variables == ["who": "ann"])
    }

    @Test(".env and .env.NAME beside the recipe feed ${NAME}; the process environment comes first")
    func dotEnv() throws {
        let scratch = try TemporaryDirectory("recipe")
        try scratch.write(".env", "# defaults\nEMAIL=base@example.com\nNAME=Base\nexport TITLE=\"From env\"\n")
        try scratch.write(".env.staging", "EMAIL=staging@example.com\n")
        let path = try scratch.write(
            "r.yaml",
            """
            sharelane: 1
            name: dotenv
            users: { alice: { email: "${EMAIL}", name: "${NAME}" } }
            zones: { Z: { share: { title: "${TITLE}" } } }
            """)
        let plain = try RecipeLoader(environment: [:]).load(path: path)
        #expect(plain.users[0].email == "base@example.com")
        let staging = try RecipeLoader(environment: ["NAME": "Process"], envName: "staging").load(path: path)
        #expect(staging.users[0].email == "staging@example.com")
        #expect(staging.users[0].name == "Process")
        guard case .share(let share) = staging.zones[0].share else {
            Issue.record("Z declares a share")
            return
        }
        #expect(share.title == "From env")
    }

    @Test("includes merge maps deeply and append lists, this file last, paths relative to the includer")
    func includes() throws {
        let scratch = try TemporaryDirectory("recipe")
        try scratch.write(
            "common/users.yaml", "users:\n  bob: { email: bob@example.com }\n  alice: { email: old@example.com }\n")
        try scratch.write(
            "common/zones.yaml",
            "include: users.yaml\nzones:\n  Z:\n    records:\n      a: { type: T, fields: { tags: [x] } }\n")
        let path = try scratch.write(
            "main.yaml",
            """
            sharelane: 1
            name: includes
            include: [common/zones.yaml]
            owner: alice
            users:
              alice: { email: alice@example.com }
            zones:
              Z:
                records:
                  a: { fields: { tags: [y] } }
                  b: { type: T }
            """)
        let recipe = try RecipeLoader(environment: [:]).load(path: path)
        #expect(recipe.users.map(\.handle) == ["bob", "alice"])
        #expect(recipe.user("alice")?.email == "alice@example.com")
        #expect(recipe.zones[0].records.map(\.name) == ["a", "b"])
        #expect(recipe.zones[0].records[0].type == "T")
        #expect(
            recipe.zones[0].records[0].fields["tags"]
                == .value(.list(elementType: .string, [.string("x"), .string("y")])))
    }

    @Test("explicit parent: is ordered after its parent; share: none and absent are kept")
    func parentsAndFlags() throws {
        let recipe = try RecipeLoader(environment: [:]).load(
            yaml: """
                sharelane: 1
                name: parents
                users: { alice: { email: a@example.com }, bob: { email: b@example.com } }
                owner: alice
                zones:
                  Z:
                    share: none
                    records:
                      child: { type: T, parent: root }
                      root:
                        type: T
                        share:
                          participants:
                            bob: { permission: read-write, role: administrator }
                      gone: { absent: true }
                  Old: { absent: true }
                """, file: "parents.yaml")
        let z = try #require(recipe.zone("Z"))
        #expect(z.share == ShareDeclaration.none)
        #expect(z.records.map(\.name) == ["root", "child", "gone"])
        #expect(z.records[2].absent)
        guard case .share(let share) = z.records[0].share else {
            Issue.record("root declares a share")
            return
        }
        #expect(share.participants.first?.role == .administrator)
        #expect(recipe.zone("Old")?.absent == true)
    }

    @Test("lanes: bare steps, every action, hooks, private lanes and lane parameters")
    func lanes() throws {
        let recipe = try RecipeLoader(environment: [:]).load(
            yaml: """
                sharelane: 1
                name: lanes
                users: { alice: { email: a@example.com }, bob: { email: b@example.com } }
                owner: alice
                vars: { who: alice }
                zones:
                  Z:
                    share: { participants: { bob: read-write } }
                    records: { r: { type: T, fields: { n: 1 } } }
                before_all: [reset]
                after_all:
                  - export: { out: out.yaml, zones: [Z] }
                error:
                  - plan
                lanes:
                  setup:
                    private: true
                    steps: [apply]
                  demo:
                    - lane: { name: setup, parameters: { who: bob } }
                    - apply: { prune: true, only: [Z] }
                    - plan: { as: alice }
                    - accept: { as: bob, zone: Z }
                    - save: { as: bob, zone: Z, record: s, type: T, parent: r, fields: { n: 2 } }
                    - expect: { as: bob, zone: Z, records: 2 }
                    - expect: { as: bob, field: { zone: Z, record: s, name: n, equals: 2 } }
                    - expect: { as: bob, can: delete, zone: Z, record: r, to_be: false }
                    - delete: { as: bob, zone: Z, record: s }
                    - leave: { as: bob, zone: Z }
                    - lane: setup
                """, file: "lanes.yaml")
        #expect(recipe.beforeAll.map(\.action) == [.reset])
        #expect(recipe.afterAll.map(\.action) == [.export(out: "out.yaml", zones: ["Z"])])
        #expect(recipe.onError.map(\.action) == [.plan(prune: false, only: [])])
        #expect(recipe.lane("setup")?.isPrivate == true)
        let demo = try #require(recipe.lane("demo"))
        #expect(
            demo.steps.map(\.action) == [
                .lane(name: "setup", parameters: ["who": "bob"]),
                .apply(prune: true, only: ["Z"]),
                .plan(prune: false, only: []),
                .accept(zone: "Z", record: nil),
                .save(zone: "Z", record: "s", type: "T", parent: "r", fields: ["n": .value(.int64(2))]),
                .expect(.records(zone: "Z", count: 2)),
                .expect(.field(zone: "Z", record: "s", name: "n", equals: .int64(2))),
                .expect(.access(can: .delete, zone: "Z", record: "r", toBe: false)),
                .delete(zone: "Z", record: "s"),
                .leave(zone: "Z", record: nil),
                .lane(name: "setup", parameters: [:]),
            ])
        #expect(demo.steps[2].actor == "alice")
        #expect(demo.steps[3].actor == "bob")
        #expect(demo.steps[0].location.line == 20)
    }

    @Test(
        "a step acting on a zone the recipe does not declare is an error at the zone's name, unless it says `undeclared: true`"
    )
    func laneStepOnAnUndeclaredZone() throws {
        func load(_ undeclared: String) throws(RecipeErrors) -> Recipe {
            try RecipeLoader(environment: [:]).load(
                yaml: """
                    sharelane: 1
                    name: live-zone
                    users:
                      alice: { email: alice@example.com }
                      bob: { email: bob@example.com }
                    owner: alice
                    zones:
                      FamilyLists: { share: {} }
                    lanes:
                      demo:
                        steps:
                          - accept: { as: bob, zone: FamilyList\(undeclared) }
                          - save: { zone: FamilyList, record: r, type: T, parent: anything\(undeclared) }
                    """, file: "live.yaml")
        }
        do {
            _ = try load("")
            Issue.record("a step on an undeclared zone loaded")
        } catch {
            let hint = " If it is another recipe's or the app's zone, say so with `undeclared: true` on the step"
            #expect(
                error.errors.map(\.description) == [
                    "live.yaml:12:34: error: zone `FamilyList` is not declared in the recipe; did you mean `FamilyLists`?"
                        + hint,
                    "live.yaml:13:23: error: zone `FamilyList` is not declared in the recipe; did you mean `FamilyLists`?"
                        + hint,
                ])
        }
        let marked = try load(", undeclared: true")
        #expect(marked.warnings.isEmpty)
        #expect(marked.lane("demo")?.steps.allSatisfy(\.zoneIsUndeclared) == true)
    }
}
