import Foundation
import SharelaneTestSupport
import Testing

/// One failure of each kind through the built binary: the exit code a script branches on and the message a
/// user reads, as they were before failures carried a kind (Docs/Plans.md: 0 success, 1 any error, a usage
/// error too, 2 changes present). A signal's 128 + N is StoppedApplyTests' and RunSignalTests'.
@Suite("A failure of each kind exits as documented")
struct FailureKindExitTests {
    static let recipe = """
        sharelane: 1
        name: kinds
        owner: alice
        users:
          alice: { email: alice@example.com }
        zones:
          Lists:
            records:
              groceries: { type: TodoList, fields: { title: Milk } }
        """

    @Test("usage: a command given what it cannot use exits 1 with its sentence, and no usage text")
    func usage() async throws {
        try await TemporaryDirectory.with("kinds") { directory in
            let login = try await SharelaneBinary.run(["login", "--store", "memory:"], in: directory.url)
            #expect(login.status == 1, "\(login.output)")
            #expect(
                login.stderr
                    == "Error: memory: is a local store: it needs no sign-in. `sharelane login` is for http: and "
                    + "cloudkit: stores\n")
            let option = try await SharelaneBinary.run(["plan", "--no-such-option"], in: directory.url)
            #expect(option.status == 1, "ArgumentParser's own code would be 64: \(option.output)")
            #expect(option.stderr.hasPrefix("Error: Unknown option '--no-such-option'"), "\(option.stderr)")
        }
    }

    @Test("input: a file that is not there exits 1 naming it")
    func input() async throws {
        try await TemporaryDirectory.with("kinds") { directory in
            let recipe = try directory.write("kinds.yaml", Self.recipe)
            let plan = try await SharelaneBinary.run(["plan", recipe, "--against", "missing.yaml"], in: directory.url)
            #expect(plan.status == 1, "\(plan.output)")
            #expect(plan.stderr == "Error: --against missing.yaml: no such file\n")
        }
    }

    @Test("store: a store nobody answers at exits 1 saying which and what to do")
    func store() async throws {
        try await TemporaryDirectory.with("kinds") { directory in
            let recipe = try directory.write("kinds.yaml", Self.recipe)
            let url = "http://127.0.0.1:\(try LoginStateTests.freePort())"
            let plan = try await SharelaneBinary.run(
                ["plan", recipe, "--store", url, "--timeout", "1s"], in: directory.url,
                environment: ["CLOUDKIT_API_TOKEN": "an-api-token-of-the-test"])
            #expect(plan.status == 1, "\(plan.output)")
            #expect(plan.stderr.contains("Error: cannot plan \(recipe) against \(url): "), "\(plan.stderr)")
            #expect(plan.stderr.contains("Check that `sharelane serve` is running at that address"), "\(plan.stderr)")
        }
    }

    @Test("conflict: a saved plan applied to another store exits 1, applying nothing; changes present exit 2")
    func conflict() async throws {
        try await TemporaryDirectory.with("kinds") { directory in
            let recipe = try directory.write("kinds.yaml", Self.recipe)
            let made = try await SharelaneBinary.run(
                ["plan", recipe, "--store", "sqlite:a.sqlite", "--out", "kinds.plan", "--detailed-exitcode"],
                in: directory.url)
            #expect(made.status == 2, "changes present: \(made.output)")
            let applied = try await SharelaneBinary.run(
                ["apply", "kinds.plan", "--store", "sqlite:b.sqlite", "--yes"], in: directory.url)
            #expect(applied.status == 1, "\(applied.output)")
            #expect(applied.stderr.hasPrefix("Error: cannot apply the saved plan kinds.plan: it was made for "))
            #expect(applied.stderr.hasSuffix("nothing was applied\n"), "\(applied.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.file("b.sqlite")))
        }
    }
}
