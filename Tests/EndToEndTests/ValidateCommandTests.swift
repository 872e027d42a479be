import Foundation
import SharelaneTestSupport
import Testing

/// `sharelane validate` as a user runs it: the built binary, its exit code, and what it prints where.
@Suite("sharelane validate")
struct ValidateCommandTests {
    /// Runs `sharelane ARGUMENTS` in the package root.
    static func run(_ arguments: [String]) async throws -> SharelaneBinary.Result {
        try await SharelaneBinary.run(arguments)
    }

    @Test(
        "every recipe in Recipes/ passes, with exit 0 and a one-line summary", arguments: try SharelaneBinary.recipes())
    func recipeValidates(_ recipe: String) async throws {
        let outcome = try await Self.run(["validate", recipe])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.hasPrefix("\(recipe): OK: recipe `"))
        #expect(outcome.stdout.split(separator: "\n").count == 1)
        #expect(outcome.stderr.isEmpty)
    }

    @Test("an invalid recipe exits 1 and prints each error as FILE:LINE:COLUMN on standard error")
    func invalidRecipe() async throws {
        let directory = try TemporaryDirectory("validate")
        let scratch = directory.url
        let file = scratch.appendingPathComponent("bad.yaml")
        try """
        sharelane: 1
        name: bad
        users: { alice: { email: alice@example.com } }
        zones:
          Lists:
            share: { participants: { bob: read-write } }
            recrods: {}
        """.write(to: file, atomically: true, encoding: .utf8)
        let outcome = try await Self.run(["validate", file.path])
        #expect(outcome.status == 1)
        #expect(outcome.stdout.isEmpty)
        #expect(
            outcome.stderr == """
                \(file.path):6:30: error: participant `bob` names no user; users are declared under `users:`
                \(file.path):7:5: error: unknown key `recrods` in zone `Lists`; did you mean `records`?
                \(file.path): 2 errors found

                """)
        #expect(!outcome.stderr.contains("Fatal") && !outcome.stderr.contains("Stack"))
    }

    @Test("--var and --env reach the recipe")
    func variables() async throws {
        let directory = try TemporaryDirectory("validate")
        let scratch = directory.url
        try "ZONE=FromEnvFile\n".write(to: scratch.appendingPathComponent(".env.ci"), atomically: true, encoding: .utf8)
        let file = scratch.appendingPathComponent("vars.yaml")
        try """
        sharelane: 1
        name: vars
        users: { "${who}": { email: someone@example.com } }
        zones: { "${ZONE}": {} }
        """.write(to: file, atomically: true, encoding: .utf8)
        let missing = try await Self.run(["validate", file.path])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("unknown variable `who`"))
        let ok = try await Self.run(["validate", file.path, "--var", "who=ann", "--env", "ci"])
        #expect(ok.status == 0, "\(ok.stderr)")
        let badVar = try await Self.run(["validate", file.path, "--var", "who"])
        #expect(badVar.status != 0)
        #expect(badVar.stderr.contains("KEY=VALUE"))
    }
}
