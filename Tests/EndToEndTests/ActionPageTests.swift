import Foundation
import SharelaneTestSupport
import Testing

/// `sharelane actions NAME` through the binary: a step's page (its keys and an example that validates), and an
/// unknown name refused with the nearest one.
@Suite("Action pages")
struct ActionPageTests {
    static let builtIn = [
        "plan", "apply", "accept", "leave", "remove", "permission", "save", "delete", "expect", "export", "reset",
        "lane", "query", "deploy_schema", "subscribe", "sh",
    ]

    static let recipe = """
        sharelane: 1
        name: pages
        vars:
          ticket: QA-0
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
        owner: alice
        zones:
          Household:
            share:
              participants:
                bob: read-only
            records:
              milk: { type: Item, fields: { title: Milk } }
        lanes:
          setup:
            steps:
              - sh: "echo ${ticket}"
          examples:
            steps:

        """

    /// The example step a page shows: the line after `Example:`.
    static func example(in page: String) -> String? {
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false)
        guard let index = lines.firstIndex(of: "Example:"), index + 1 < lines.count else { return nil }
        return lines[index + 1].trimmingCharacters(in: .whitespaces)
    }

    @Test("an action's page says what it does, each key required or optional with its meaning, and an example")
    func pageListsKeysAndExample() async throws {
        let result = try await SharelaneBinary.run(["actions", "permission"])
        #expect(result.status == 0, "\(result.output)")
        let page = result.stdout
        #expect(page.hasPrefix("permission: change a participant's permission"), "\(page)")
        #expect(page.contains("participant   required  the participant, by handle"), "\(page)")
        #expect(page.contains("to            required  the new permission: `read-only` or `read-write`"), "\(page)")
        #expect(page.contains("as            optional  the user (a handle) the step acts as"), "\(page)")
        #expect(page.contains("expect_error  optional"), "\(page)")
        #expect(
            Self.example(in: page) == "- permission: { zone: Household, participant: bob, to: read-write }",
            "\(page)")
        // The listing, unchanged without a name, points at the pages.
        let listing = try await SharelaneBinary.run(["actions"])
        #expect(listing.status == 0, "\(listing.output)")
        #expect(listing.stdout.contains("Built in:\n  plan"), "\(listing.output)")
        #expect(listing.stdout.contains("`sharelane actions NAME`"), "\(listing.output)")
    }

    @Test("every built-in action's example validates as a step of a lane")
    func examplesValidate() async throws {
        var steps: [String] = []
        for name in Self.builtIn {
            let result = try await SharelaneBinary.run(["actions", name])
            #expect(result.status == 0, "\(name): \(result.output)")
            #expect(result.stdout.contains("Keys:"), "\(name): \(result.output)")
            let example = try #require(Self.example(in: result.stdout), "\(name): \(result.output)")
            #expect(example.hasPrefix("- \(name)"), "\(name): \(example)")
            steps.append("      " + example)
        }
        let scratch = try TemporaryDirectory("e2e")
        let path = try scratch.write("pages.yaml", Self.recipe + steps.joined(separator: "\n") + "\n")
        let valid = try await SharelaneBinary.run(["validate", path])
        #expect(valid.status == 0, "\(valid.output)")
        #expect(valid.stdout.contains("OK"), "\(valid.output)")

        // The check is real: a mistyped key in one of those steps is refused.
        let mistyped = try scratch.write(
            "mistyped.yaml",
            Self.recipe + steps.joined(separator: "\n").replacingOccurrences(of: "participant:", with: "participnt:")
                + "\n")
        let refused = try await SharelaneBinary.run(["validate", mistyped])
        #expect(refused.status == 1, "\(refused.output)")
    }

    @Test("an outside action's page shows its description and where it was found")
    func outsideActionPage() async throws {
        let scratch = try TemporaryDirectory("e2e")
        let path = try scratch.write("pages.yaml", Self.recipe + "      - apply\n")
        let script = try scratch.write(
            "actions/sharelane-notify", "#!/bin/sh\nif [ \"$1\" = --describe ]; then echo 'Post a message'; fi\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        let result = try await SharelaneBinary.run(["actions", "notify", "--recipe", path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.hasPrefix("notify: Post a message"), "\(result.output)")
        #expect(result.stdout.contains("sharelane-notify"), "\(result.output)")
        #expect(result.stdout.contains("register  optional"), "\(result.output)")
    }

    @Test("an unknown action name, or a recipe that is not there, is an error exiting 1")
    func unknownNameIsAnError() async throws {
        let result = try await SharelaneBinary.run(["actions", "accpet"])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("there is no action `accpet`; did you mean `accept`?"), "\(result.output)")
        #expect(result.stdout.isEmpty, "\(result.output)")

        let missing = try await SharelaneBinary.run(["actions", "nosuch.yaml"])
        #expect(missing.status == 1, "\(missing.output)")
        #expect(missing.stderr.contains("there is no recipe at nosuch.yaml"), "\(missing.output)")
    }
}
