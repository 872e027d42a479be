import Foundation
import SharelaneTestSupport
import Testing

/// `sharelane init`, run as the built binary in empty directories: what it writes works as written, it never
/// overwrites without --force, it keeps .gitignore tidy, it starts from a store, and the CI workflow's plan
/// step does what the workflow says.
@Suite("sharelane init", .serialized)
struct InitCommandTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory("init") }

    func run(_ arguments: [String], in folder: URL? = nil) async throws -> SharelaneBinary.Result {
        try await SharelaneBinary.run(arguments, in: folder ?? directory.url, environment: ["NO_COLOR": "1"])
    }

    func contents(_ name: String) throws -> String {
        try String(contentsOfFile: directory.file(name), encoding: .utf8)
    }

    @Test("the starter recipe plans, applies and runs its lane as written, twice, on the default store")
    func starterWorksAsWritten() async throws {
        let initialized = try await run(["init", "--name", "team-notes", "--container", "iCloud.com.example.Notes"])
        #expect(initialized.status == 0, "\(initialized.output)")
        #expect(initialized.stdout.contains("Wrote sharelane.yaml"), "\(initialized.stdout)")
        #expect(initialized.stdout.contains("Next:\n  sharelane plan "), "\(initialized.stdout)")
        let recipe = try contents("sharelane.yaml")
        #expect(recipe.contains("name: team-notes "))
        #expect(recipe.contains("container: iCloud.com.example.Notes "))
        // The editor's schema line first (this binary's checkout has the schema), then the starter explains itself.
        let lines = recipe.split(separator: "\n", omittingEmptySubsequences: false)
        // Relative to the recipe, beside which init wrote the schema: it resolves on every clone, never a path of
        // the machine init ran on.
        #expect(lines.first == "# yaml-language-server: $schema=recipe.schema.json", "\(recipe.prefix(200))")
        let schema = try contents("recipe.schema.json")
        let shipped = try String(
            contentsOf: BuiltProducts.packageRoot.appendingPathComponent("Recipes/recipe.schema.json"), encoding: .utf8)
        #expect(schema == shipped)
        #expect(lines.count > 1 && lines[1].hasPrefix("# A sharelane recipe"), "the starter explains itself")

        let validated = try await run(["validate", "sharelane.yaml"])
        #expect(validated.status == 0, "\(validated.output)")
        let plan = try await run(["plan", "--detailed-exitcode"])
        #expect(plan.status == 2, "\(plan.output)")
        #expect(plan.stdout.contains("  + zone Notes\n"), "\(plan.stdout)")
        #expect(plan.stdout.contains("  + participant Notes/bob"), "\(plan.stdout)")
        #expect(plan.stdout.hasSuffix("Plan: 5 to add, 0 to change, 0 to destroy.\n"), "\(plan.stdout)")

        for attempt in 1...2 {
            let lane = try await run(["run", "check"])
            #expect(lane.status == 0, "run \(attempt): \(lane.output)")
            #expect(lane.stdout.contains("✔ lane check succeeded: 7 steps"), "run \(attempt): \(lane.stdout)")
        }
        #expect(
            FileManager.default.fileExists(atPath: directory.file(".sharelane/store.sqlite")),
            "the default store, which .gitignore now ignores")
        let settled = try await run(["plan", "--detailed-exitcode"])
        #expect(settled.status == 0, "\(settled.output)")
    }

    @Test("in a project with its recipe, init --ci github keeps it and adds only what is missing; --force rewrites")
    func addsWhatIsMissing() async throws {
        try FileManager.default.createDirectory(
            at: directory.url.appendingPathComponent("Recipes"), withIntermediateDirectories: true)
        try directory.write("Recipes/sharelane.yaml", "sharelane: 1\nname: mine\n")
        let added = try await run(["init", "--ci", "github"])
        #expect(added.status == 0, "\(added.output)")
        #expect(added.stdout.contains("Kept Recipes/sharelane.yaml, the project's recipe"), "\(added.output)")
        #expect(added.stdout.contains("Wrote .github/workflows/sharelane-plan.yml"), "\(added.output)")
        #expect(added.stdout.contains("Added .sharelane/ to .gitignore"), "\(added.output)")
        #expect(added.stdout.contains("Added the schema line to Recipes/sharelane.yaml"), "\(added.output)")
        // What to run next is about the project's recipe, not the starter's lane.
        #expect(added.stdout.contains("Next:\n  sharelane validate "), "\(added.output)")
        #expect(!added.stdout.contains("run check"), "\(added.output)")
        let recipe = try contents("Recipes/sharelane.yaml")
        #expect(recipe.hasPrefix("# yaml-language-server: $schema=recipe.schema.json\n"), "\(recipe)")
        #expect(FileManager.default.fileExists(atPath: directory.file("Recipes/recipe.schema.json")))
        #expect(recipe.hasSuffix("\nsharelane: 1\nname: mine\n"), "the recipe itself is untouched: \(recipe)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("sharelane.yaml")), "no second recipe")
        let workflow = try contents(".github/workflows/sharelane-plan.yml")
        #expect(
            workflow.contains("SHARELANE_RECIPE: Recipes/sharelane.yaml"), "the workflow plans the project's recipe")
        // The default ref is a branch every copy of the repository has, not a release tag.
        #expect(workflow.contains("ref: ${{ vars.SHARELANE_REF || 'main' }}"), "\(workflow)")

        let again = try await run(["init", "--ci", "github"])
        #expect(again.status == 0, "\(again.output)")
        #expect(again.stdout.contains("Kept .github/workflows/sharelane-plan.yml"), "\(again.output)")
        #expect(again.stdout.contains("Nothing to add"), "\(again.output)")
        #expect(try contents("Recipes/sharelane.yaml") == recipe, "the schema line is not added twice")
        try FileManager.default.removeItem(atPath: directory.file("Recipes"))
        try FileManager.default.removeItem(atPath: directory.file(".github"))

        try directory.write(".github/workflows/sharelane-plan.yml", "# mine\n")
        let kept = try await run(["init", "--ci", "github"])
        #expect(kept.status == 0, "\(kept.output)")
        #expect(try contents(".github/workflows/sharelane-plan.yml") == "# mine\n")

        let forced = try await run(["init", "--ci", "github", "--force"])
        #expect(forced.status == 0, "\(forced.output)")
        #expect(try contents("sharelane.yaml").contains("lanes:"))
        #expect(try contents(".github/workflows/sharelane-plan.yml").contains("name: sharelane plan"))
    }

    @Test("a schema line naming a path of the machine, as an older init wrote it, is made relative to the recipe")
    func machinePathSchemaLineIsReplaced() async throws {
        try directory.write(
            "sharelane.yaml",
            "# yaml-language-server: $schema=/home/someone/sharelane/Recipes/recipe.schema.json\n"
                + "sharelane: 1\nname: mine\n")
        let result = try await run(["init"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("Made the schema line of sharelane.yaml relative to it"), "\(result.stdout)")
        #expect(
            try contents("sharelane.yaml")
                == "# yaml-language-server: $schema=recipe.schema.json\nsharelane: 1\nname: mine\n")
        #expect(FileManager.default.fileExists(atPath: directory.file("recipe.schema.json")))
        // A schema file edited by hand is kept unless --force.
        try directory.write("recipe.schema.json", "{}")
        let kept = try await run(["init"])
        #expect(kept.stdout.contains("Kept recipe.schema.json; it is not this sharelane's schema"), "\(kept.stdout)")
        #expect(try contents("recipe.schema.json") == "{}")
        #expect(try await run(["init", "--force"]).status == 0)
        #expect(try contents("recipe.schema.json") != "{}")
    }

    @Test(".gitignore: created with .sharelane/, appended to after a last line without a newline, never twice")
    func gitignore() async throws {
        #expect(try await run(["init"]).status == 0)
        #expect(try contents(".gitignore") == ".sharelane/\n")
        #expect(try await run(["init", "--force"]).status == 0)
        #expect(try contents(".gitignore") == ".sharelane/\n", "not added twice")

        let other = try TemporaryDirectory("init-gitignore")
        try other.write(".gitignore", ".build/\n*.o")
        let appended = try await run(["init"], in: other.url)
        #expect(appended.stdout.contains("Added .sharelane/ to .gitignore"), "\(appended.stdout)")
        #expect(try String(contentsOfFile: other.file(".gitignore"), encoding: .utf8) == ".build/\n*.o\n.sharelane/\n")

        let ignored = try TemporaryDirectory("init-ignored")
        try ignored.write(".gitignore", "/.sharelane\n")
        let kept = try await run(["init"], in: ignored.url)
        #expect(!kept.stdout.contains(".gitignore"), "\(kept.stdout)")
        #expect(try String(contentsOfFile: ignored.file(".gitignore"), encoding: .utf8) == "/.sharelane\n")
    }

    static let shared = """
        sharelane: 1
        name: shared-lists
        owner: alice
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
          dana: { email: dana@example.com }
        zones:
          Lists:
            share: { participants: { bob: read-write, dana: { permission: read-only, accepted: false } } }
            records:
              groceries:
                type: TodoList
                fields: { title: Groceries }
                children:
                  milk: { type: Todo, fields: { title: Milk, qty: 2 } }
          Trips:
            records:
              italy: { type: Trip, fields: { name: Italy }, share: { participants: { bob: read-only } } }
        """

    @Test("--from-store declares what the store holds: it plans to no changes there and its lane passes")
    func fromStore() async throws {
        let source = try TemporaryDirectory("init-source")
        let store = "sqlite:" + source.file("store.sqlite")
        let applied = try await run(["apply", try source.write("shared.yaml", Self.shared), "--yes", "--store", store])
        #expect(applied.status == 0, "\(applied.output)")

        // The store has one user with zones, so --owner may be left out.
        let initialized = try await run(["init", "--from-store", store, "--name", "from-store"])
        #expect(initialized.status == 0, "\(initialized.output)")
        #expect(initialized.stdout.contains("alice@example.com's 2 zones"), "\(initialized.stdout)")
        #expect(initialized.stdout.contains("sharelane plan --store \(store)"), "\(initialized.stdout)")
        let recipe = try contents("sharelane.yaml")
        #expect(recipe.contains("\n# Started by `sharelane init --from-store`"), "\(recipe)")
        #expect(recipe.contains("- expect: { records: 2, zone: Lists }"), "\(recipe)")
        #expect(recipe.contains("- expect: { as: bob, can: read, zone: Trips, record: italy }"), "\(recipe)")
        #expect(!recipe.contains("as: dana"), "dana has not accepted, so cannot read yet")

        let plan = try await run(["plan", "--detailed-exitcode", "--store", store])
        #expect(plan.status == 0, "\(plan.output)")
        #expect(plan.stdout.hasSuffix("Plan: 0 to add, 0 to change, 0 to destroy.\n"), "\(plan.stdout)")
        let lane = try await run(["run", "check", "--store", store])
        #expect(lane.status == 0, "\(lane.output)")
        #expect(lane.stdout.contains("✔ lane check succeeded"), "\(lane.stdout)")

        let owned = try TemporaryDirectory("init-owner")
        let named = try await run(["init", "--from-store", store, "--owner", "alice@example.com"], in: owned.url)
        #expect(named.status == 0, "\(named.output)")
        let nobody = try await run(
            ["init", "--from-store", store, "--owner", "zed@example.com", "--force"], in: owned.url)
        #expect(nobody.status == 1)
        #expect(nobody.stderr.contains("has no user zed@example.com"), "\(nobody.output)")
    }

    @Test("--from-store without --owner, where several users own zones, names them and writes nothing")
    func fromStoreNeedsAnOwner() async throws {
        let source = try TemporaryDirectory("init-owners")
        let store = "sqlite:" + source.file("store.sqlite")
        let second = """
            sharelane: 1
            name: bobs
            owner: bob
            users: { bob: { email: bob@example.com } }
            zones: { Bench: { records: { note: { type: Note, fields: { title: Hi } } } } }
            """
        for (file, text) in [("a.yaml", Self.shared), ("b.yaml", second)] {
            #expect(try await run(["apply", try source.write(file, text), "--yes", "--store", store]).status == 0)
        }
        let refused = try await run(["init", "--from-store", store])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("pass --owner EMAIL"), "\(refused.output)")
        #expect(refused.stderr.contains("alice@example.com") && refused.stderr.contains("bob@example.com"))
        #expect(!FileManager.default.fileExists(atPath: directory.file("sharelane.yaml")))
        #expect(!FileManager.default.fileExists(atPath: directory.file(".gitignore")))
    }
}
