import Foundation
import SharelaneTestSupport
import Testing

/// `--as` reads the same in every command: a handle of the recipe, an email address in any case with white
/// space around it, and a user record name name one user, and a name nobody has gets one message.
@Suite final class UserArgumentTests {
    let scratch: TemporaryDirectory
    let store: String
    let recipe = "Recipes/sharelane.yaml"

    init() throws {
        scratch = try TemporaryDirectory("as")
        store = "sqlite:" + scratch.file("store.sqlite")
    }

    /// Each command that reads the store as someone, with `--as` left for last.
    private var commands: [[String]] {
        [
            ["show", recipe, "--store", store],
            ["show", recipe, "--store", store, "--format", "json"],
            ["access", recipe, "--store", store],
            ["graph", recipe, "--store", store, "--out", scratch.file("graph.svg")],
            ["query", recipe, "--store", store, "--zone", "FamilyLists", "--type", "Todo"],
        ]
    }

    @Test func aHandleAnEmailAddressAndARecordNameNameOneUserInEveryCommand() throws {
        let demo = try SharelaneBinary.run(["run", "demo", recipe, "--store", store])
        #expect(demo.status == 0, "\(demo.output)")
        let shown = try SharelaneBinary.run(["show", recipe, "--store", store, "--as", "bob", "--database", "public"])
        let header = try #require(shown.stdout.split(separator: "\n").first)
        // "Store …, as bob@example.com (_…)"
        let recordName = try #require(header.split(separator: "(").last?.dropLast()).description
        #expect(recordName.hasPrefix("_") && recordName.count == 33, "\(shown.output)")
        for command in commands {
            let answers = try ["bob", " BOB@Example.COM\t", recordName].map {
                try SharelaneBinary.run(command + ["--as", $0])
            }
            for answer in answers {
                #expect(answer.status == 0, "\(command): \(answer.output)")
                #expect(answer.stdout == answers[0].stdout, "\(command)")
                #expect(answer.stderr == answers[0].stderr, "\(command)")
            }
        }
        let query = try SharelaneBinary.run(commands[4] + ["--as", recordName])
        #expect(query.stdout.contains("(bob's shared database, development)"), "\(query.output)")
    }

    @Test func aNameNobodyHasGetsOneMessageEverywhere() throws {
        let demo = try SharelaneBinary.run(["run", "demo", recipe, "--store", store])
        #expect(demo.status == 0, "\(demo.output)")
        let message =
            ": --as takes a handle of the recipe (alice, bob, carol, dana), an email address or a user record name"
        for command in commands {
            for name in ["zed", "Zed@Example.com", "_0123456789abcdef0123456789abcdef"] {
                let answer = try SharelaneBinary.run(command + ["--as", name])
                #expect(answer.status == 1, "\(command): \(answer.output)")
                #expect(
                    answer.stderr.contains("no user '\(name)' in \(store)\(message)"), "\(command): \(answer.output)")
            }
        }
        let login = try SharelaneBinary.run(["login", recipe, "--store", "http://127.0.0.1:9", "--as", "zed"])
        #expect(login.status == 1)
        #expect(login.stderr.contains("no user 'zed' in http://127.0.0.1:9\(message)"), "\(login.output)")
    }

    @Test func logoutReadsAHandleAndAnEmailAddressAsOneUser() throws {
        let tokens = ["SHARELANE_TOKEN_FILE": scratch.file("tokens.json")]
        let answers = try ["bob", " BOB@Example.COM "].map {
            try SharelaneBinary.run(
                ["logout", recipe, "--store", "http://127.0.0.1:9", "--as", $0], environment: tokens)
        }
        for answer in answers {
            #expect(answer.status == 0, "\(answer.output)")
            #expect(answer.stdout == answers[0].stdout)
            #expect(answer.stdout.hasSuffix(" (development) and bob@example.com.\n"), "\(answer.output)")
        }
    }
}
