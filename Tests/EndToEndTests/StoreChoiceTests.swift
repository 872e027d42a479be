import Foundation
import SharelaneTestSupport
import Testing

/// What `--store` may name, as a new user types it: a scheme without its colon, Apple's URL, a path that does
/// not exist yet, a database of another program, a file that is no database. None of them is taken silently.
@Suite final class StoreChoiceTests {
    let scratch: TemporaryDirectory
    let recipe = BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml").path

    init() throws {
        scratch = try TemporaryDirectory("e2e-store-choice")
    }

    func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: scratch.path).sorted()
    }

    @Test func aSchemeWithoutItsColonIsRefusedWithTheOneMeant() async throws {
        for word in ["cloudkit", "memory", "http", "sqlite"] {
            let result = try await SharelaneBinary.run(["plan", recipe, "--store", word], in: scratch.url)
            #expect(result.status == 1, "\(word): \(result.output)")
            #expect(result.stderr.contains("did you mean `\(word):`?"), "\(result.stderr)")
        }
        let left = try files()
        #expect(left.isEmpty, "no file named after a scheme: \(left)")
    }

    @Test func applesURLPointsToCloudKitColon() async throws {
        let result = try await SharelaneBinary.run(
            ["plan", recipe, "--store", "https://api.apple-cloudkit.com"], in: scratch.url,
            environment: ["CLOUDKIT_API_TOKEN": ""])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("is Apple's CloudKit service: write --store cloudkit:"), "\(result.stderr)")
        #expect(!result.stderr.contains("that `sharelane serve` printed"), "\(result.stderr)")
    }

    @Test func aPlanOfAStoreNotMadeYetReadsItEmptyAndMakesNothing() async throws {
        let plan = try await SharelaneBinary.run(["plan", recipe, "--store", "new.sqlite"], in: scratch.url)
        #expect(plan.status == 0, "\(plan.output)")
        #expect(plan.stdout.contains("Plan: 21 to add"), "\(plan.stdout)")
        #expect(plan.stderr.contains("new.sqlite does not exist yet: read as an empty store, and not made"))
        for command in [["show"], ["access", recipe], ["export", recipe]] {
            let read = try await SharelaneBinary.run(command + ["--store", "new.sqlite"], in: scratch.url)
            #expect(read.stderr.contains("does not exist yet"), "\(command): \(read.output)")
        }
        let made = try files()
        #expect(made.isEmpty, "a plan changes nothing, not even the file system: \(made)")
        // A plan saved against it applies to the store the apply makes, and a second plan finds nothing to do.
        let saved = try await SharelaneBinary.run(
            ["plan", recipe, "--store", "new.sqlite", "--out", scratch.file("plan.json")], in: scratch.url)
        #expect(saved.status == 0, "\(saved.output)")
        let applied = try await SharelaneBinary.run(
            ["apply", scratch.file("plan.json"), "--store", "new.sqlite", "--yes"], in: scratch.url)
        #expect(applied.status == 0, "\(applied.output)")
        let again = try await SharelaneBinary.run(["plan", recipe, "--store", "new.sqlite"], in: scratch.url)
        #expect(again.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."), "\(again.output)")
    }

    @Test func anotherProgramsDatabaseIsRefusedAndLeftByteForByte() async throws {
        let other = scratch.file("other.db")
        let made = try await SharelaneBinary.runProcess(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c",
                "import sqlite3; c = sqlite3.connect('\(other)'); c.execute('create table notes (id, body)'); "
                    + "c.execute(\"insert into notes values (1, 'keep me')\"); c.commit()",
            ])
        #expect(made.status == 0, "\(made.output)")
        let before = try Data(contentsOf: URL(fileURLWithPath: other))
        let text = scratch.file("notes.txt")
        try Data("just text\n".utf8).write(to: URL(fileURLWithPath: text))
        for arguments in [
            ["show", "--store", "sqlite:other.db"], ["plan", recipe, "--store", "other.db"],
            ["apply", recipe, "--store", "other.db", "--yes"], ["serve", "--store", "other.db", "--", "true"],
        ] {
            let result = try await SharelaneBinary.run(arguments, in: scratch.url)
            #expect(result.status == 1, "\(arguments): \(result.output)")
            #expect(
                result.stderr.contains(
                    "is a SQLite database of another program (tables notes), not a sharelane store; "
                        + "it was left untouched"), "\(result.stderr)")
        }
        let refused = try await SharelaneBinary.run(["show", "--store", "notes.txt"], in: scratch.url)
        #expect(refused.stderr.contains("notes.txt is not a SQLite database"), "\(refused.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: other)) == before)
        #expect(try String(contentsOfFile: text, encoding: .utf8) == "just text\n")
        let left = try files()
        #expect(left == ["notes.txt", "other.db"], "\(left)")
    }

    @Test func aCommandSaysWhichWorldItReadAndHowToReadAnother() async throws {
        let store = ["--store", "o.sqlite"]
        let applied = try await SharelaneBinary.run(["apply", recipe, "--yes"] + store, in: scratch.url)
        #expect(applied.status == 0, "\(applied.output)")
        // The folder's own recipe names another container.
        _ = try scratch.write(
            "sharelane.yaml",
            """
            sharelane: 1
            name: mine
            container: iCloud.com.example.Mine
            users: { mia: { email: mia@example.com } }
            owner: mia
            zones: { Notes: {} }
            """)
        let hint =
            "(read iCloud.com.example.Mine/development, the container of sharelane.yaml; the store also holds "
            + "iCloud.com.example.Lists/development: read one with --container iCloud.com.example.Lists)"
        let show = try await SharelaneBinary.run(["show"] + store, in: scratch.url)
        #expect(show.stdout.contains("is empty \(hint)"), "\(show.output)")
        let alice = try await SharelaneBinary.run(["show", "--as", "alice@example.com"] + store, in: scratch.url)
        #expect(alice.status == 1)
        #expect(alice.stderr.contains(hint), "\(alice.stderr)")
        let export = try await SharelaneBinary.run(["export", "--owner", "alice@example.com"] + store, in: scratch.url)
        #expect(export.stderr.contains(hint), "\(export.stderr)")
        // --container reads the other world.
        let other = try await SharelaneBinary.run(
            ["show", "--container", "iCloud.com.example.Lists"] + store, in: scratch.url)
        #expect(
            other.stdout.hasPrefix("Store sqlite:o.sqlite (iCloud.com.example.Lists, development): 4 users"),
            "\(other.output)")
        let access = try await SharelaneBinary.run(
            ["access", "--container", "iCloud.com.example.Lists", "--environment", "development"] + store,
            in: scratch.url)
        #expect(access.stdout.contains("4 users × 2 shares"), "\(access.output)")
        // Reading a world the store does not hold makes none.
        let worlds = (try? FileManager.default.contentsOfDirectory(atPath: scratch.file("o.sqlite.worlds"))) ?? []
        #expect(!worlds.contains("iCloud.com.example.Mine"), "\(worlds)")
        let files = try files()
        #expect(files.filter { $0.hasPrefix("o.sqlite") } == ["o.sqlite", "o.sqlite.lock"], "\(files)")
    }
}
