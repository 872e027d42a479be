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

    @Test func aHandleAnEmailAddressAndARecordNameNameOneUserInEveryCommand() async throws {
        let demo = try await SharelaneBinary.run(["run", "demo", recipe, "--store", store])
        #expect(demo.status == 0, "\(demo.output)")
        let shown = try await SharelaneBinary.run([
            "show", recipe, "--store", store, "--as", "bob", "--database", "public",
        ])
        let header = try #require(shown.stdout.split(separator: "\n").first)
        // "Store …, as bob@example.com (_…)"
        let recordName = try #require(header.split(separator: "(").last?.dropLast()).description
        #expect(recordName.hasPrefix("_") && recordName.count == 33, "\(shown.output)")
        for command in commands {
            var answers: [SharelaneBinary.Result] = []
            for user in ["bob", " BOB@Example.COM\t", recordName] {
                answers.append(try await SharelaneBinary.run(command + ["--as", user]))
            }
            for answer in answers {
                #expect(answer.status == 0, "\(command): \(answer.output)")
                #expect(answer.stdout == answers[0].stdout, "\(command)")
                #expect(answer.stderr == answers[0].stderr, "\(command)")
            }
        }
        let query = try await SharelaneBinary.run(commands[4] + ["--as", recordName])
        #expect(query.stdout.contains("(bob's shared database, development)"), "\(query.output)")
    }

    @Test func aNameNobodyHasGetsOneMessageEverywhere() async throws {
        let demo = try await SharelaneBinary.run(["run", "demo", recipe, "--store", store])
        #expect(demo.status == 0, "\(demo.output)")
        let message =
            ": --as takes a handle of the recipe (alice, bob, carol, dana), an email address or a user record name"
        for command in commands {
            for name in ["zed", "Zed@Example.com", "_0123456789abcdef0123456789abcdef"] {
                let answer = try await SharelaneBinary.run(command + ["--as", name])
                #expect(answer.status == 1, "\(command): \(answer.output)")
                #expect(
                    answer.stderr.contains("no user '\(name)' in \(store)\(message)"), "\(command): \(answer.output)")
            }
        }
        let login = try await SharelaneBinary.run(["login", recipe, "--store", "http://127.0.0.1:9", "--as", "zed"])
        #expect(login.status == 1)
        #expect(login.stderr.contains("no user 'zed' in http://127.0.0.1:9\(message)"), "\(login.output)")
    }

    @Test func logoutReadsAHandleAndAnEmailAddressAsOneUser() async throws {
        let tokens = ["SHARELANE_TOKEN_FILE": scratch.file("tokens.json")]
        var answers: [SharelaneBinary.Result] = []
        for user in ["bob", " BOB@Example.COM "] {
            answers.append(
                try await SharelaneBinary.run(
                    ["logout", recipe, "--store", "http://127.0.0.1:9", "--as", user], environment: tokens))
        }
        for answer in answers {
            #expect(answer.status == 0, "\(answer.output)")
            #expect(answer.stdout == answers[0].stdout)
            #expect(answer.stdout.hasSuffix(" (development) and bob@example.com.\n"), "\(answer.output)")
        }
    }
}
