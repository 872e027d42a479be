import Foundation
import GRDB
import SharelaneTestSupport
import Testing

/// The command line as Terraform and fastlane users expect it, run as the built binary: destroy, --target,
/// exit codes and hints, variables, completion and help, warnings for lanes on live zones.
@Suite("Terraform and fastlane habits", .serialized)
struct CommandLineHabitsTests {
    let directory: TemporaryDirectory
    var store: String { "sqlite:" + directory.file("store.sqlite") }

    init() throws { directory = try TemporaryDirectory("habits") }

    static let recipe = """
        sharelane: 1
        name: habits
        owner: alice
        vars: { title: Default }
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
        zones:
          Lists:
            share: { participants: { bob: read-write } }
            records:
              groceries: { type: TodoList, fields: { title: "${title}" } }
        lanes:
          check:
            desc: The stored title is the one the variables give.
            steps:
              - expect: { field: { zone: Lists, record: groceries, name: title, equals: "${title}" } }
        """

    func run(_ arguments: [String]) async throws -> SharelaneBinary.Result {
        try await SharelaneBinary.run(arguments, in: directory.url, environment: ["NO_COLOR": "1"])
    }

    func recipe() throws -> String { try directory.write("habits.yaml", Self.recipe) }

    /// Every row of every table of the SQLite file at `path`, as `TABLE|VALUE|…` lines in a stable order.
    static func rows(of path: String) throws -> [String] {
        let database = try DatabaseQueue(path: path)
        defer { try? database.close() }
        return try database.read { db in
            let tables = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            var lines: [String] = []
            for table in tables {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"") {
                    lines.append(([table] + row.databaseValues.map(\.description)).joined(separator: "|"))
                }
            }
            return lines.sorted()
        }
    }

    @Test("apply without --yes off a terminal shows the plan and refuses, making no store file and no lock")
    func applyRefusedMakesNothing() async throws {
        let recipe = try recipe()
        let refused = try await run(["apply", recipe, "--store", store])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("apply needs --yes"), "\(refused.output)")
        #expect(refused.stdout.contains("+ zone Lists"), "the plan is shown: \(refused.output)")
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0 != "habits.yaml" }
        #expect(left.isEmpty, "a refused apply left \(left)")
        // The same of an existing store: it is neither changed nor locked.
        #expect(try await run(["apply", recipe, "--yes", "--store", store]).status == 0)
        // Every row of every table: an apply may leave its last pages in SQLite's write-ahead log, which the
        // next command to open the file folds into it (the same rows, other bytes of the file).
        let before = try Self.rows(of: directory.file("store.sqlite"))
        #expect(before.contains { $0.hasPrefix("zone|") }, "\(before.prefix(5))")
        // SQLite's shared-memory index and write-ahead log come and go beside a WAL file as it is opened and
        // closed: they are no part of what a refused apply may not change.
        func files() throws -> Set<String> {
            Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
                .filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        }
        let made = try files()
        _ = try directory.write("habits.yaml", Self.recipe.replacingOccurrences(of: "groceries", with: "chores"))
        let again = try await run(["apply", recipe, "--store", store])
        #expect(again.status == 1, "\(again.output)")
        #expect(try Self.rows(of: directory.file("store.sqlite")) == before)
        let remaining = try files()
        #expect(remaining == made, "a refused apply left \(remaining.subtracting(made))")
    }

    @Test("destroy asks, refuses without --yes off a terminal, removes what the recipe owns, and plan then adds it all")
    func destroy() async throws {
        let recipe = try recipe()
        #expect(try await run(["apply", recipe, "--yes", "--store", store]).status == 0)
        let refused = try await run(["destroy", recipe, "--store", store])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("destroy needs --yes"), "\(refused.output)")
        #expect(
            try await run(["plan", recipe, "--detailed-exitcode", "--store", store]).status == 0,
            "nothing was destroyed")

        let destroyed = try await run(["destroy", recipe, "--yes", "--store", store])
        #expect(destroyed.status == 0, "\(destroyed.output)")
        #expect(destroyed.stdout.contains("  - zone Lists\n"), "\(destroyed.stdout)")
        #expect(destroyed.stdout.hasSuffix("Destroy complete! Resources: 1 destroyed.\n"), "\(destroyed.stdout)")
        // Again: the store matches the recipe's absence, and says so, not that it matches the recipe.
        let again = try await run(["destroy", recipe, "--yes", "--store", store])
        #expect(again.status == 0, "\(again.output)")
        #expect(
            again.stdout == "Nothing to destroy: \(store) holds nothing that recipe habits declares.\n",
            "\(again.stdout)")
        let plan = try await run(["plan", recipe, "--detailed-exitcode", "--store", store])
        #expect(plan.status == 2)
        #expect(plan.stdout.hasSuffix("Plan: 4 to add, 0 to change, 0 to destroy.\n"), "\(plan.stdout)")
    }

    @Test("--target plans the address and what it needs, warns that the plan is partial, and refuses a non-address")
    func target() async throws {
        let recipe = try recipe()
        let plan = try await run(["plan", recipe, "--target", "record Lists/groceries", "--store", store])
        #expect(plan.status == 0, "\(plan.output)")
        #expect(plan.stdout.contains("  + zone Lists\n  + record Lists/groceries\n"), "\(plan.stdout)")
        #expect(!plan.stdout.contains("share Lists"))
        #expect(plan.stdout.contains("Resource targeting is in effect"))
        #expect(
            try await run(["apply", recipe, "--yes", "--target", "record.Lists/groceries", "--store", store]).status
                == 0)
        let rest = try await run(["plan", recipe, "--store", store])
        #expect(rest.stdout.hasSuffix("Plan: 2 to add, 0 to change, 0 to destroy.\n"), "\(rest.stdout)")

        let bad = try await run(["plan", recipe, "--target", "zone", "--store", store])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("--target 'zone' is not an address"), "\(bad.output)")
    }

    @Test("usage errors exit 1 with the usage; a mistyped command or lane gets the same hint every time")
    func usageErrorsAndHints() async throws {
        let recipe = try recipe()
        var hints: Set<String> = []
        for _ in 0..<3 {
            let typo = try await run(["plna"])
            #expect(typo.status == 1)
            hints.insert(typo.stderr)
        }
        #expect(hints.count == 1)
        #expect(hints.first?.contains("unknown command 'plna'; did you mean 'plan'?") == true, "\(hints)")
        let flag = try await run(["plan", recipe, "--formt", "json"])
        #expect(flag.status == 1)
        #expect(flag.stderr.contains("Usage: sharelane plan"), "\(flag.stderr)")
        let format = try await run(["plan", recipe, "--format", "xml"])
        #expect(format.status == 1)
        let lane = try await run(["run", "chek", recipe, "--store", store])
        #expect(lane.status == 1)
        #expect(lane.stderr.contains("no lane named 'chek'; did you mean 'check'?"), "\(lane.stderr)")
    }

    @Test("run, plan and validate take --var and --var-file; a bad variable file is an error at its line")
    func variables() async throws {
        let recipe = try recipe()
        let file = try directory.write("prod.yaml", "title: From a file\n")
        #expect(try await run(["apply", recipe, "--yes", "--var-file", file, "--store", store]).status == 0)
        let checked = try await run(["run", "check", recipe, "--var-file", file, "--store", store])
        #expect(checked.status == 0, "\(checked.output)")
        // --var wins over --var-file, and run's trailing KEY=VALUE over both.
        let plan = try await run(["plan", recipe, "--var-file", file, "--var", "title=Other", "--store", store])
        #expect(plan.stdout.contains("title: \"From a file\" → \"Other\""), "\(plan.stdout)")
        let trailing = try await run([
            "run", "check", recipe, "title=From a file", "--var", "title=Other", "--store", store,
        ])
        #expect(trailing.status == 0, "the trailing parameter wins: \(trailing.output)")
        let overridden = try await run([
            "run", "check", recipe, "--var-file", file, "--var", "title=Other", "--store", store,
        ])
        #expect(overridden.status == 1, "--var wins over --var-file: \(overridden.output)")

        let bad = try directory.write("bad.yaml", "title: [a, b]\n")
        let invalid = try await run(["validate", recipe, "--var-file", bad])
        #expect(invalid.status == 1)
        #expect(
            invalid.stderr.contains("\(bad):1:8: error: variable `title` must be a single value"), "\(invalid.stderr)")
    }

    @Test("a lane may act on a zone another recipe declared when it says so: the step fails only if it is missing")
    func laneOnALiveZone() async throws {
        let recipe = try recipe()
        let other = try directory.write(
            "other.yaml",
            """
            sharelane: 1
            name: other
            owner: alice
            users: { alice: { email: alice@example.com } }
            lanes:
              add:
                steps:
                  - save: { zone: Lists, record: extra, type: Todo, fields: { title: Extra }, undeclared: true }
            """)
        let validated = try await run(["validate", other])
        #expect(validated.status == 0, "\(validated.output)")
        #expect(!validated.stderr.contains("warning"), "\(validated.output)")
        let missing = try await run(["run", "add", other, "--store", store])
        #expect(missing.status == 1)
        #expect(missing.stdout.contains("\(other):8:9: error: save Todo Lists/extra failed"), "\(missing.stdout)")
        #expect(missing.stdout.contains("ZONE_NOT_FOUND"))
        #expect(try await run(["apply", recipe, "--yes", "--store", store]).status == 0)
        let added = try await run(["run", "add", other, "--store", store])
        #expect(added.status == 0, "\(added.output)")
    }

    @Test("export --owner takes the handle that export itself writes")
    func exportOwnerByExportedHandle() async throws {
        let recipe = try recipe()
        #expect(try await run(["apply", recipe, "--yes", "--store", store]).status == 0)
        let exported = try await run(["export", "--owner", "alice", "--store", store])
        #expect(exported.status == 0, "\(exported.output)")
        #expect(exported.stdout.contains("owner: alice"))
        #expect(exported.stdout.contains("  Lists:"))
        let nobody = try await run(["export", "--owner", "zed", "--store", store])
        #expect(nobody.status == 1)
        #expect(nobody.stderr.contains("has no user exported as zed"), "\(nobody.stderr)")
    }

    @Test("completion scripts for bash, zsh and fish; lanes and --target addresses complete from the recipe")
    func completion() async throws {
        for shell in ["bash", "zsh", "fish"] {
            let script = try await run(["completion", shell])
            #expect(script.status == 0)
            #expect(script.stdout.contains("destroy") && script.stdout.contains("--target"), "\(shell)")
        }
        let recipe = try recipe()
        let lanes = try await run([
            "---completion", "run", "--", "positional@0", "2", "0", "sharelane", "run", "", recipe,
        ])
        #expect(lanes.stdout == "check\n", "\(lanes.output)")
        let targets = try await run([
            "---completion", "plan", "--", "--target", "3", "0", "sharelane", "plan", recipe, "",
        ])
        #expect(
            targets.stdout.split(separator: "\n") == [
                "zone.Lists", "share.Lists", "participant.Lists/bob", "record.Lists/groceries",
            ], "\(targets.output)")
    }

    @Test("each command's help ends with examples")
    func helpHasExamples() async throws {
        for command in [
            "validate", "plan", "apply", "destroy", "run", "lanes", "export", "show", "serve", "record", "replay",
            "conformance",
            "completion",
        ] {
            let help = try await run([command, "--help"])
            #expect(help.status == 0)
            // The help ends with two or three examples, each a command line to copy.
            let parts = help.stdout.components(separatedBy: "\n\nEXAMPLES:\n")
            #expect(parts.count == 2, "\(command): \(help.stdout)")
            let lines = (parts.last ?? "").split(separator: "\n")
            #expect((2...3).contains(lines.count), "\(command): \(lines)")
            #expect(lines.allSatisfy { $0.hasPrefix("  sharelane ") || $0.hasPrefix("  source ") }, "\(lines)")
            #expect(lines.contains { $0.contains(command) }, "\(command): \(lines)")
        }
    }

    @Test("messages say one thing: a duplicate key where it is repeated, a user's error once, a value in its words")
    func messagesSayOneThing() async throws {
        let file = try directory.write(
            "messages.yaml",
            """
            sharelane: 1
            name: messages
            owner: alice
            users:
              alice: { email: alice@example.com }
              bob: { emial: bob@example.com }
            zones:
              Lists:
                share: { participants: { bob: read-write } }
              Lists: {}
            lanes:
              l:
                steps:
                  - expect: { as: bob, can: read, zone: Lists, to_be: "false" }
            """)
        let result = try await run(["validate", file])
        #expect(result.status == 1)
        #expect(
            result.stderr.split(separator: "\n").map(String.init) == [
                "\(file):10:3: error: duplicate key `Lists` in a mapping (first at line 8); each key may appear once",
                "\(file): 1 error found",
            ], "\(result.stderr)")
        let fixed = try directory.write(
            "messages.yaml",
            try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(of: "  Lists: {}\n", with: ""))
        let again = try await run(["validate", fixed])
        #expect(
            again.stderr.split(separator: "\n").map(String.init) == [
                "\(file):6:8: error: user `bob` needs an `email:`",
                "\(file):6:10: error: unknown key `emial` in user `bob`; did you mean `email`?",
                "\(file):13:59: error: `to_be` must be `true` or `false`, not the quoted text \"false\"; write false without quotes",
                "\(file): 3 errors found",
            ], "\(again.stderr)")
    }
}
