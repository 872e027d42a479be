import Foundation
import SharelaneTestSupport
import Testing

/// Runs the built `sharelane` binary (`swift build` first) the way a user or CI does: real processes, a real
/// SQLite store file in a temporary directory, standard input that is not a terminal.
@Suite("sharelane plan, apply and export", .serialized)
struct PlanApplyCommandTests {
    static let packageRoot = BuiltProducts.packageRoot
    static let binary = SharelaneBinary.executable

    /// The recipes of `Recipes/` by file name; an empty or missing folder is an error, not zero cases.
    static func recipes() throws -> [String] { try SharelaneBinary.recipes().map { String($0.dropFirst(8)) } }

    /// A temporary directory with its own store file, removed afterwards.
    final class Sandbox {
        let scratch: TemporaryDirectory
        var directory: URL { scratch.url }
        init() throws { scratch = try TemporaryDirectory("e2e") }
        var store: String { "sqlite:" + scratch.file("store.sqlite") }
        func path(_ name: String) -> String { scratch.file(name) }

        /// Runs the binary in the sandbox, on its store, without colour.
        func run(_ arguments: [String]) async throws -> SharelaneBinary.Result {
            try await SharelaneBinary.run(
                arguments, in: directory, environment: ["NO_COLOR": "1", "SHARELANE_STORE": store])
        }
    }

    static func recipe(_ name: String) -> String { packageRoot.appendingPathComponent("Recipes/\(name)").path }

    @Test(
        "every recipe in Recipes/: apply, plan again → no changes (exit 0); export, plan the export → no changes",
        arguments: try recipes())
    func applyPlanExport(recipe name: String) async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary.path), "build sharelane first: swift build")
        let sandbox = try Sandbox()
        let recipe = Self.recipe(name)
        let apply = try await sandbox.run(["apply", recipe, "--yes"])
        #expect(apply.status == 0, "\(apply.stderr)")
        // The apply ends with what it did, once; the plan's pending count is not repeated after it.
        let lines = apply.stdout.split(separator: "\n").map(String.init)
        #expect(lines.last?.hasPrefix("Apply complete! Resources: ") == true, "\(apply.stdout)")
        #expect(lines.filter { $0.hasPrefix("Plan: ") }.count == 1, "\(apply.stdout)")

        let plan = try await sandbox.run(["plan", recipe, "--detailed-exitcode"])
        #expect(plan.status == 0, "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.hasSuffix("Plan: 0 to add, 0 to change, 0 to destroy.\n"))

        let export = try await sandbox.run(["export", "--recipe", recipe, "--out", sandbox.path("exported.yaml")])
        #expect(export.status == 0, "\(export.stderr)")
        let exported = try await sandbox.run(["plan", sandbox.path("exported.yaml"), "--detailed-exitcode"])
        #expect(exported.status == 0, "\(exported.stdout)\(exported.stderr)")
        #expect(exported.stdout.hasSuffix("Plan: 0 to add, 0 to change, 0 to destroy.\n"))
    }

    @Test("plan --detailed-exitcode: 2 with changes, 0 without, 1 on error")
    func exitCodes() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary.path), "build sharelane first: swift build")
        let sandbox = try Sandbox()
        let recipe = Self.recipe(try #require(Self.recipes().first))
        let changes = try await sandbox.run(["plan", recipe, "--detailed-exitcode"])
        #expect(changes.status == 2, "\(changes.stderr)")
        #expect(changes.stdout.contains(" to add, 0 to change, 0 to destroy.\n"))
        // Without --detailed-exitcode, changes are a success.
        #expect(try await sandbox.run(["plan", recipe]).status == 0)

        #expect(try await sandbox.run(["apply", recipe, "--yes"]).status == 0)
        #expect(try await sandbox.run(["plan", recipe, "--detailed-exitcode"]).status == 0)

        let missing = try await sandbox.run(["plan", sandbox.path("no-such.yaml"), "--detailed-exitcode"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no-such.yaml"))
    }

    @Test("apply refuses without --yes when standard input is not a terminal, and changes nothing")
    func refusesWithoutYes() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary.path), "build sharelane first: swift build")
        let sandbox = try Sandbox()
        let recipe = Self.recipe(try #require(Self.recipes().first))
        let refused = try await sandbox.run(["apply", recipe])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("--yes"))
        #expect(refused.stderr.contains("nothing was applied"))
        let plan = try await sandbox.run(["plan", recipe, "--detailed-exitcode"])
        #expect(plan.status == 2, "the refused apply changed the store")
    }

    @Test("a saved plan: refused, naming what changed and changing nothing, when the store changed; applied when not")
    func savedPlans() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary.path), "build sharelane first: swift build")
        let sandbox = try Sandbox()
        let recipe = sandbox.path("lists.yaml")
        func write(a: Int, b: Int) throws {
            try """
            sharelane: 1
            name: lists
            users: { alice: { email: alice@example.com } }
            owner: alice
            zones:
              Lists:
                records:
                  a: { type: Thing, fields: { n: \(a) } }
                  b: { type: Thing, fields: { n: \(b) } }
            """.write(toFile: recipe, atomically: true, encoding: .utf8)
        }
        try write(a: 1, b: 1)
        #expect(try await sandbox.run(["apply", recipe, "--yes"]).status == 0)

        try write(a: 2, b: 1)
        let planFile = sandbox.path("plan.json")
        let saved = try await sandbox.run(["plan", recipe, "--out", planFile])
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(saved.stdout.contains("n: 1 → 2"))

        // Behind the saved plan's back, b changes.
        try write(a: 1, b: 5)
        #expect(try await sandbox.run(["apply", recipe, "--yes"]).status == 0)

        let refused = try await sandbox.run(["apply", planFile, "--yes"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("record Lists/b changed"), "\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was applied"))
        // Nothing changed: the store still has a = 1, b = 5.
        #expect(try await sandbox.run(["plan", recipe, "--detailed-exitcode"]).status == 0)

        // Planned again on the store as it is, the saved plan applies.
        try write(a: 2, b: 5)
        #expect(try await sandbox.run(["plan", recipe, "--out", planFile]).status == 0)
        let applied = try await sandbox.run(["apply", planFile, "--yes"])
        #expect(applied.status == 0, "\(applied.stderr)")
        #expect(
            applied.stdout.hasSuffix(
                "Plan: 0 to add, 1 to change, 0 to destroy.\n\nApply complete! Resources: 0 added, 1 changed, 0 destroyed.\n"
            ))
        #expect(try await sandbox.run(["plan", recipe, "--detailed-exitcode"]).status == 0)
    }

    @Test("plan --out of one plan, twice, writes the same bytes: a record's fields and a zone's change tags in order")
    func savedPlanBytesRepeat() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary.path), "build sharelane first: swift build")
        let sandbox = try Sandbox()
        let recipe = sandbox.path("lists.yaml")
        func write(version: Int) throws {
            try """
            sharelane: 1
            name: lists
            users: { alice: { email: alice@example.com } }
            owner: alice
            zones:
              Lists:
                records:
                  "item-{{i}}":
                    repeat: \(4 * version)
                    type: Item
                    fields: { title: "Item {{i}} v\(version)", note: "Note \(version)", qty: \(version), price: \(version).5 }
            """.write(toFile: recipe, atomically: true, encoding: .utf8)
        }
        try write(version: 1)
        #expect(try await sandbox.run(["apply", recipe, "--yes"]).status == 0)
        // Four records change every field, four are created; the first plan leaves the plan cache as the two
        // saved plans after it read it.
        try write(version: 2)
        #expect(try await sandbox.run(["plan", recipe]).status == 0)
        let files = [sandbox.path("first.json"), sandbox.path("second.json")]
        for file in files {
            let saved = try await sandbox.run(["plan", recipe, "--out", file])
            #expect(saved.status == 0, "\(saved.stderr)")
        }
        let first = try Data(contentsOf: URL(fileURLWithPath: files[0]))
        let second = try Data(contentsOf: URL(fileURLWithPath: files[1]))
        #expect(first.count > 0)
        #expect(
            first == second, "\(String(decoding: first, as: UTF8.self))\n\(String(decoding: second, as: UTF8.self))")
    }

    @Test("apply --yes into a pipe prints the whole plan, a blank line, the result and the summary, in that order")
    func applyPrintsThePlanFirst() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary.path), "build sharelane first: swift build")
        let sandbox = try Sandbox()
        let recipe = sandbox.path("many.yaml")
        // Enough records that the plan is far longer than a pipe's buffer, written while the apply runs.
        try """
        sharelane: 1
        name: many
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
        owner: alice
        zones:
          Bulk:
            share: { participants: { bob: read-only } }
            records:
              "item-{{i:04}}":
                repeat: 3000
                type: Item
                fields: { title: "Item {{i}}", note: "{{fake.sentence}}" }
        """.write(toFile: recipe, atomically: true, encoding: .utf8)
        let plan = try await sandbox.run(["plan", recipe])
        #expect(plan.status == 0)
        let summary = try #require(plan.stdout.split(separator: "\n").last.map(String.init))
        #expect(summary == "Plan: 3003 to add, 0 to change, 0 to destroy.")
        let apply = try await sandbox.run(["apply", recipe, "--yes"])
        #expect(apply.status == 0, "\(apply.stderr)")
        #expect(
            apply.stdout == plan.stdout + "\nApply complete! Resources: 3003 added, 0 changed, 0 destroyed.\n")
    }

    @Test("plan --format json and markdown")
    func formats() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.binary.path), "build sharelane first: swift build")
        let sandbox = try Sandbox()
        let recipe = Self.recipe(try #require(Self.recipes().first))
        let json = try await sandbox.run(["plan", recipe, "--format", "json"])
        #expect(json.status == 0)
        let document = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(document?["format_version"] as? Int == 1)
        #expect(((document?["summary"] as? [String: Int])?["add"] ?? 0) > 0)
        let markdown = try await sandbox.run(["plan", recipe, "--format", "markdown"])
        #expect(markdown.stdout.contains("<details>"))
        #expect(markdown.stdout.contains("```diff"))
        #expect(!markdown.stdout.contains("\u{1B}["))
    }
}

/// Credentials never reach the terminal or a saved plan.
@Suite struct CredentialOutputTests {
    @Test("a credential's value in a --var is masked in the plan, and a plan holding it is not saved")
    func credentialValuesAreMaskedAndNotSaved() async throws {
        let scratch = try TemporaryDirectory("e2e")
        let directory = scratch.url
        let recipe = directory.appendingPathComponent("r.yaml").path
        try """
        sharelane: 1
        name: r
        users: { alice: { email: alice@example.com } }
        zones:
          Notes:
            records:
              n1: { type: Note, fields: { note: "${note}" } }
        """.write(toFile: recipe, atomically: true, encoding: .utf8)
        let token = "tok-SECRET-1234567"
        let environment = ["CLOUDKIT_API_TOKEN": token]
        let plan = try await SharelaneBinary.run(
            ["plan", recipe, "--store", "memory:", "--var", "note=\(token)"], in: directory, environment: environment)
        #expect(plan.status == 0, "\(plan.output)")
        #expect(!plan.output.contains("SECRET"), "\(plan.output)")
        #expect(plan.stdout.contains("note: \"***\""), "\(plan.stdout)")
        let out = directory.appendingPathComponent("plan.json").path
        let saved = try await SharelaneBinary.run(
            ["plan", recipe, "--store", "memory:", "--var", "note=\(token)", "--out", out], in: directory,
            environment: environment)
        #expect(saved.status == 1)
        #expect(saved.stderr.contains("the plan holds the value of a credential"))
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}

/// `--store http://…` with nothing listening.
@Suite struct DeadServerCommandTests {
    @Test("plan against a store where nothing listens fails with what to do; --timeout takes a Terraform duration")
    func planAgainstADeadServer() async throws {
        let result = try await SharelaneBinary.run(
            ["plan", "Recipes/sharelane.yaml", "--store", "http://127.0.0.1:1", "--timeout", "1s"],
            environment: ["CLOUDKIT_API_TOKEN": "token"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot reach http://127.0.0.1:1"), "\(result.stderr)")
        #expect(result.stderr.contains("or give it longer with --timeout"))
        let bad = try await SharelaneBinary.run(
            ["plan", "Recipes/sharelane.yaml", "--store", "http://127.0.0.1:1", "--timeout", "soon"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--timeout"))
    }
}
