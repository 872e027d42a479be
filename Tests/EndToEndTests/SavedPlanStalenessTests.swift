import Foundation
import SharelaneTestSupport
import Testing

/// A saved plan is refused only when something it reads or writes changed since it was planned: its zones'
/// shares and participants, the records its recipe declares or it writes. A participant's own note in the
/// shared zone does not make it stale; it is said, and the plan applies.
@Suite("Saved plans and unrelated writes", .serialized)
struct SavedPlanStalenessTests {
    let directory: TemporaryDirectory
    var store: String { "sqlite:" + directory.file("store.sqlite") }

    init() throws { directory = try TemporaryDirectory("saved-plan-staleness") }

    static func recipe(dana: String) -> String {
        """
        sharelane: 1
        name: lists
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
          dana: { email: dana@example.com }
        owner: alice
        zones:
          Lists:
            share: { participants: { bob: read-write, dana: \(dana) } }
            records:
              groceries: { type: TodoList, fields: { title: Groceries } }
        lanes:
          bob-adds:
            steps:
              - save: { as: bob, zone: Lists, record: bobs-note, type: Note, fields: { text: Hi } }
          bob-edits:
            steps:
              - save: { as: bob, zone: Lists, record: groceries, type: TodoList, fields: { title: Food } }
        """
    }

    func run(_ arguments: [String]) async throws -> SharelaneBinary.Result {
        try await SharelaneBinary.run(arguments, in: directory.url, environment: ["NO_COLOR": "1"])
    }

    @Test("a record the plan neither declares nor writes may change; a declared one makes the plan stale")
    func onlyWhatThePlanReadsOrWrites() async throws {
        let recipe = try directory.write("lists.yaml", Self.recipe(dana: "read-only"))
        #expect(try await run(["apply", recipe, "--yes", "--store", store]).status == 0)
        _ = try directory.write("lists.yaml", Self.recipe(dana: "read-write"))
        let planFile = directory.file("plan.json")
        #expect(try await run(["plan", recipe, "--out", planFile, "--store", store]).status == 0)

        // Bob adds a note of his own: the plan changes dana's permission, and reads nothing of bob's note.
        #expect(try await run(["run", "bob-adds", recipe, "--store", store]).status == 0)
        let applied = try await run(["apply", planFile, "--yes", "--store", store])
        #expect(applied.status == 0, "\(applied.output)")
        #expect(
            applied.stderr.contains(
                "The store changed since the plan, but not in what the plan reads or writes; applying it:\n  - record Lists/bobs-note was created"
            ), "\(applied.output)")

        // A declared record changed behind a saved plan: refused, naming it, and nothing applied.
        _ = try directory.write("lists.yaml", Self.recipe(dana: "read-only"))
        #expect(try await run(["plan", recipe, "--out", planFile, "--store", store]).status == 0)
        #expect(try await run(["run", "bob-edits", recipe, "--store", store]).status == 0)
        let refused = try await run(["apply", planFile, "--yes", "--store", store])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.stderr.contains("the saved plan is stale"), "\(refused.output)")
        #expect(refused.stderr.contains("  - record Lists/groceries changed (change tag"), "\(refused.output)")
        #expect(!refused.stderr.contains("bobs-note"), "\(refused.output)")
    }
}
