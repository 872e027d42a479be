import Foundation
import SharelaneTestSupport
import Testing

/// `sharelane plan --against`: the plan of a recipe against the state another recipe declares, from a file or
/// from a git revision of a real repository made here, with no store and no credentials.
@Suite("plan --against another recipe", .serialized)
final class PlanAgainstCommandTests {
    let repository: TemporaryDirectory

    /// The recipe on `main`: Alice shares her lists with Bob (read-write) and Carol (read-only), and a trip
    /// with Carol; Bob and Carol come from an include, the Lists share's title from a variables file, and a
    /// record holds an asset file.
    static let recipe = """
        sharelane: 1
        name: family
        include: [common/people.yaml]
        users:
          alice: { email: alice@example.com }
        owner: alice
        zones:
          Lists:
            share:
              title: "${lists_title}"
              participants:
                bob: read-write
                carol: read-only
            records:
              groceries: { type: TodoList, fields: { title: Groceries, photo: !asset assets/photo.txt } }
          Trips:
            records:
              italy:
                type: Group
                fields: { name: Italy }
                share:
                  participants:
                    carol: read-write

        """

    static let people = """
        vars:
          lists_title: Family lists
        users:
          bob: { email: bob@example.com }
          carol: { email: carol@example.com }

        """

    init() async throws {
        repository = try TemporaryDirectory("against")
        try await git("init", "--quiet", "--initial-branch=main")
        try repository.write("sharelane.yaml", Self.recipe)
        try repository.write("common/people.yaml", Self.people)
        try repository.write("assets/photo.txt", "a photo\n")
        try await commit("The family's recipe")
    }

    @discardableResult
    func git(_ arguments: String...) async throws -> SharelaneBinary.Result {
        let result = try await SharelaneBinary.runProcess(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
                + arguments,
            in: repository.url)
        guard result.status == 0 else { throw FixtureError(message: "git \(arguments) failed: \(result.output)") }
        return result
    }

    func commit(_ message: String) async throws {
        try await git("add", "--all")
        try await git("commit", "--quiet", "-m", message)
    }

    /// `sharelane plan ARGUMENTS` in the repository, with a store variable that would fail if it were opened
    /// (no credentials for Apple's service): `--against` opens no store.
    func plan(_ arguments: String...) async throws -> SharelaneBinary.Result {
        try await SharelaneBinary.run(
            ["plan"] + arguments, in: repository.url,
            environment: ["SHARELANE_STORE": "cloudkit:", "NO_COLOR": "1", "CLOUDKIT_API_TOKEN": ""])
    }

    func edit(_ file: String, _ change: (String) -> String) throws {
        let text = try String(contentsOfFile: repository.file(file), encoding: .utf8)
        let changed = change(text)
        #expect(changed != text, "the edit of \(file) changes it")
        try repository.write(file, changed)
    }

    @Test("the same recipe plans to no changes against itself at HEAD, and nothing is written beside it")
    func unchangedRecipe() async throws {
        let result = try await plan("--against", "git:HEAD")
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stdout.hasPrefix(
                "Against `sharelane.yaml` at `HEAD`: the state that recipe declares, not a live store.\n"),
            "\(result.stdout)")
        #expect(result.stdout.contains("No changes: recipe family declares what the base recipe declares."))
        #expect(result.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."))
        // No store was opened: nothing beside the recipe, and git sees no change.
        #expect(!FileManager.default.fileExists(atPath: repository.file(".sharelane")))
        #expect(try await git("status", "--porcelain").stdout.isEmpty)
    }

    @Test("a changed participant: one change, the permission before → after")
    func changedParticipant() async throws {
        try edit("sharelane.yaml") { $0.replacingOccurrences(of: "bob: read-write", with: "bob: read-only") }
        let result = try await plan("--against", "git:main", "--detailed-exitcode")
        #expect(result.status == 2, "\(result.output)")
        #expect(result.stdout.contains("~ participant Lists/bob"), "\(result.stdout)")
        #expect(result.stdout.contains("permission: read-write → read-only"), "\(result.stdout)")
        #expect(result.stdout.contains("Plan: 0 to add, 1 to change, 0 to destroy."), "\(result.stdout)")
    }

    @Test("a new zone: its creation, against a revision named by a tag and an explicit path")
    func newZone() async throws {
        try await git("tag", "v1")
        try edit("sharelane.yaml") {
            $0.replacingOccurrences(
                of: "  Trips:\n",
                with: "  Notes:\n    records:\n      first: { type: Note, fields: { text: Hi } }\n  Trips:\n")
        }
        try await commit("A zone of notes")
        let result = try await plan("--against", "git:v1:sharelane.yaml", "--format", "json")
        #expect(result.status == 0, "\(result.output)")
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let against = json?["against"] as? [String: Any]
        #expect(against?["recipe"] as? String == "sharelane.yaml")
        #expect(against?["revision"] as? String == "v1")
        #expect(against?["problem"] is NSNull, "\(String(describing: against))")
        let addresses = (json?["changes"] as? [[String: Any]])?.compactMap { $0["address"] as? String }
        #expect(addresses == ["zone Notes", "record Notes/first"], "\(result.stdout)")
    }

    @Test("a removed share: its deletion, and the markdown says what the plan is against and what it destroys")
    func removedShare() async throws {
        try edit("sharelane.yaml") {
            $0.replacingOccurrences(
                of: "        share:\n          participants:\n            carol: read-write\n",
                with: "        share: none\n")
        }
        let result = try await plan("--against", "git:main", "--format", "markdown")
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stdout.hasPrefix("#### sharelane plan: `family` against `sharelane.yaml` at `main`\n"),
            "\(result.stdout)")
        #expect(result.stdout.contains("Planned against the state `sharelane.yaml` at `main` declares"))
        #expect(result.stdout.contains("> This plan destroys 1 thing: `share Trips/italy`."), "\(result.stdout)")
        #expect(result.stdout.contains("**Plan: 0 to add, 0 to change, 1 to destroy.**"), "\(result.stdout)")
        #expect(!result.stdout.contains("[!CAUTION]"))
    }

    @Test("an include, a variables file's value and an asset changed on one side only are read at the revision")
    func includeChangedOnOneSide() async throws {
        // The recipe file is the same on both sides; only what it includes and holds changed.
        try edit("common/people.yaml") {
            $0.replacingOccurrences(of: "Family lists", with: "Our lists")
                + "  dana: { email: dana@example.com }\n"
        }
        try repository.write("assets/photo.txt", "another photo\n")
        try edit("sharelane.yaml") {
            $0.replacingOccurrences(of: "carol: read-only\n", with: "carol: read-only\n        dana: read-only\n")
        }
        let result = try await plan("--against", "git:main")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("+ participant Lists/dana"), "\(result.stdout)")
        #expect(result.stdout.contains("title: \"Family lists\" → \"Our lists\""), "\(result.stdout)")
        #expect(result.stdout.contains("~ record Lists/groceries"), "the asset's bytes changed: \(result.stdout)")

        // The other way round: the base branch moved on, the working tree's include did not.
        try await git("checkout", "--quiet", "--", ".")
        try await git("checkout", "--quiet", "-b", "topic")
        try await git("checkout", "--quiet", "main")
        try edit("common/people.yaml") { $0.replacingOccurrences(of: "bob@example.com", with: "robert@example.com") }
        try await commit("Bob's new address")
        try await git("checkout", "--quiet", "topic")
        let behind = try await plan("--against", "git:main")
        #expect(behind.status == 0, "\(behind.output)")
        // On the base, Bob is robert@; here he is bob@ again: a new person in Bob's place.
        #expect(behind.stdout.contains("participant Lists/bob"), "\(behind.stdout)")
        #expect(!behind.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."), "\(behind.stdout)")
    }

    @Test("a base that does not validate: its problems named at the revision, a plan against nothing, marked")
    func baseThatDoesNotValidate() async throws {
        try await git("checkout", "--quiet", "-b", "broken")
        try edit("sharelane.yaml") { $0.replacingOccurrences(of: "bob: read-write", with: "bobby: read-write") }
        try await commit("A participant nobody declared")
        try await git("checkout", "--quiet", "main")
        let result = try await plan("--against", "git:broken", "--format", "markdown")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stderr.contains("broken:sharelane.yaml:"), "the problem at the revision: \(result.stderr)")
        #expect(result.stderr.contains("error:") && result.stderr.contains("bobby"), "\(result.stderr)")
        #expect(!result.stderr.contains("sharelane-against-"), "no temporary path: \(result.stderr)")
        #expect(result.stdout.contains("> [!CAUTION]"), "\(result.stdout)")
        #expect(
            result.stdout.contains("the base recipe `sharelane.yaml` at `broken` does not validate (1 error)"),
            "\(result.stdout)")
        // Against nothing, everything the recipe declares is new.
        #expect(result.stdout.contains("+ zone Lists") && result.stdout.contains("+ zone Trips"), "\(result.stdout)")
        #expect(result.stdout.contains("0 to change, 0 to destroy.**"), "\(result.stdout)")

        let text = try await plan("--against", "git:broken")
        #expect(
            text.stdout.hasPrefix(
                "Against nothing: `sharelane.yaml` at `broken` does not validate (1 error); every declared thing is planned as new.\n"
            ), "\(text.stdout)")
    }

    @Test("a recipe new on this side plans against nothing; a revision git does not have is an error")
    func missingBase() async throws {
        try repository.write("other.yaml", Self.recipe.replacingOccurrences(of: "name: family", with: "name: other"))
        let result = try await plan("other.yaml", "--against", "git:main")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.hasPrefix("Against nothing: `other.yaml` at `main` does not exist;"), "\(result.stdout)")

        let unknown = try await plan("--against", "git:no-such-branch")
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no commit named no-such-branch"), "\(unknown.stderr)")
    }

    @Test("against a file: the other recipe on disk; --out and --store are refused")
    func againstAFile() async throws {
        try repository.write(
            "base.yaml", Self.recipe.replacingOccurrences(of: "carol: read-only", with: "carol: read-write"))
        let result = try await plan("--against", "base.yaml")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.hasPrefix("Against `base.yaml`: the state"), "\(result.stdout)")
        #expect(result.stdout.contains("permission: read-write → read-only"), "\(result.stdout)")

        let saved = try await plan("--against", "base.yaml", "--out", "plan.json")
        #expect(saved.status != 0 && saved.stderr.contains("--out"), "\(saved.output)")
        let stored = try await plan("--against", "base.yaml", "--store", "memory:")
        #expect(stored.status != 0 && stored.stderr.contains("--store"), "\(stored.output)")
    }

    @Test("a committed symbolic link out of the repository is never read, and its target never quoted")
    func linksOutOfTheRepository() async throws {
        // Written as git writes a link (`ln -s`): the recipe itself, and an include beside it.
        let secret = try TemporaryDirectory("outside")
        let outside = try secret.write("secret.yaml", "password: hunter2-outside-the-repository\n")
        try FileManager.default.createSymbolicLink(
            atPath: repository.file("evil.yaml"), withDestinationPath: "/etc/passwd")
        try FileManager.default.createSymbolicLink(
            atPath: repository.file("common/secret.yaml"), withDestinationPath: outside)
        try FileManager.default.createSymbolicLink(
            atPath: repository.file("common/climb.yaml"), withDestinationPath: "../../../../../../../../etc/hostname")
        // A link within the repository resolves within it, as a checkout would.
        try FileManager.default.createSymbolicLink(
            atPath: repository.file("common/people-link.yaml"), withDestinationPath: "people.yaml")
        try await commit("Links")
        let refused = try await plan("--against", "git:HEAD:evil.yaml")
        #expect(refused.status == 1, "\(refused.output)")
        #expect(
            refused.stderr.contains("evil.yaml is a symbolic link out of the repository at HEAD"), "\(refused.stderr)")
        #expect(!refused.output.contains("root:"), "nothing of /etc/passwd is quoted: \(refused.output)")
        // A base whose include leads out: it does not validate, the link is named, its target never read. (The
        // recipe planned is the working tree's, which includes the people again.)
        try edit("sharelane.yaml") { $0.replacingOccurrences(of: "[common/people.yaml]", with: "[common/secret.yaml]") }
        try await commit("Include the link")
        try edit("sharelane.yaml") { $0.replacingOccurrences(of: "[common/secret.yaml]", with: "[common/people.yaml]") }
        let included = try await plan("--against", "git:HEAD")
        #expect(!included.output.contains("hunter2"), "\(included.output)")
        #expect(
            included.stderr.contains("note: common/secret.yaml is a symbolic link out of the repository at HEAD"),
            "\(included.stderr)")
        #expect(included.stderr.contains("does not validate; planning against nothing"), "\(included.stderr)")
        // A link within the repository is followed, as a checkout follows it.
        try edit("sharelane.yaml") {
            $0.replacingOccurrences(of: "[common/people.yaml]", with: "[common/people-link.yaml]")
        }
        try await commit("Include the link within")
        let within = try await plan("--against", "git:HEAD")
        #expect(within.status == 0, "\(within.output)")
        #expect(within.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."), "\(within.output)")
    }
}
