import Crypto
import Foundation
import SharelaneTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A saved plan edited by hand, by someone who may recompute its digest, or applied to another store than
/// its own, is refused through the binary with exit 1 and a message, the store untouched; a plan being
/// written leaves no temporary file when a signal stops it, and an apply stopped while it plans says that
/// nothing changed.
@Suite("Saved plans edited, moved and interrupted", .serialized)
struct SavedPlanTamperTests {
    let directory: TemporaryDirectory
    var store: String { "sqlite:" + directory.file("store.sqlite") }

    init() throws { directory = try TemporaryDirectory("saved-plan-tamper") }

    /// The recipe applied first, with groceries titled `title`.
    static func recipe(title: String) -> String {
        """
        sharelane: 1
        name: lists
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
        owner: alice
        zones:
          Lists:
            share: { participants: { bob: read-only } }
            records:
              groceries: { type: TodoList, fields: { title: \(title) } }
        """
    }

    static let key = "ci-secret-0123456789abcdef"

    func run(_ arguments: [String], in folder: URL? = nil, environment: [String: String] = [:]) async throws
        -> SharelaneBinary.Result
    {
        var all = ["NO_COLOR": "1"]
        all.merge(environment) { $1 }
        return try await SharelaneBinary.run(arguments, in: folder ?? directory.url, environment: all)
    }

    /// Applies the recipe titled Groceries, then saves the plan that retitles it Food: one change pending.
    func pendingPlan(environment: [String: String] = [:]) async throws -> (recipe: String, plan: String) {
        let recipe = try directory.write("lists.yaml", Self.recipe(title: "Groceries"))
        let applied = try await run(["apply", recipe, "--yes", "--store", store])
        #expect(applied.status == 0, "\(applied.output)")
        _ = try directory.write("lists.yaml", Self.recipe(title: "Food"))
        let plan = directory.file("plan.json")
        let saved = try await run(["plan", recipe, "--out", plan, "--store", store], environment: environment)
        #expect(saved.status == 0, "\(saved.output)")
        return (recipe, plan)
    }

    /// Whether the store still holds only what the first apply wrote: the plan of the edited recipe still
    /// has its one change.
    func storeUntouched(_ recipe: String) async throws -> Bool {
        let plan = try await run(["plan", recipe, "--store", store, "--detailed-exitcode"])
        return plan.status == 2 && plan.stdout.contains("Plan: 0 to add, 1 to change, 0 to destroy.")
    }

    /// The file's text with `edit` made to the lines before its digest, and the digest computed again; the
    /// signature kept as it was, or left out.
    static func forged(_ text: String, keepingSignature: Bool, _ edit: (String) -> String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        let last = lines.removeLast()
        let body = edit(lines.joined(separator: "\n") + "\n")
        let digest = SHA256.hash(data: Data(body.utf8)).map { String(format: "%02x", $0) }.joined()
        let signature =
            keepingSignature
            ? last.range(of: ",\"signature\"").map { String(last[$0.lowerBound...].dropLast()) } ?? "" : ""
        return body + "{\"digest\":\"sha256:\(digest)\"\(signature)}\n"
    }

    /// The edits that once crashed `apply FILE` (exit 132 or 139), each with what the refusal says.
    static let crashingEdits: [(name: String, says: String)] = [
        ("zones -1", "line 1 says -1 zones follow, and a count is never negative"),
        ("changes -1", "line 1 says -1 changes follow, and a count is never negative"),
        ("changes Int64.max", "line 1 says 9223372036854775807 changes follow, more lines than the"),
        // The 65th level: the 64th `[`, after `{"publicRecordNames":` (21 characters) or `{"x":` (5).
        (
            "300,000 [ in the public basis",
            "it is damaged at line 3, column 85: its objects and arrays nest deeper than 64 levels"
        ),
        (
            "300,000 [ in a change",
            "it is damaged at line 4, column 69: its objects and arrays nest deeper than 64 levels"
        ),
        ("300,000 [ in the header", "line 1, the header, is not a saved plan's"),
    ]

    static func edit(_ name: String, _ text: String) -> String {
        var lines = text.split(separator: "\n").map(String.init)
        let deep = String(repeating: "[", count: 300_000)
        switch name {
        case "zones -1": lines[0] = lines[0].replacingOccurrences(of: "\"zones\":1", with: "\"zones\":-1")
        case "changes -1": lines[0] = lines[0].replacingOccurrences(of: "\"changes\":1", with: "\"changes\":-1")
        case "changes Int64.max":
            lines[0] = lines[0].replacingOccurrences(of: "\"changes\":1", with: "\"changes\":9223372036854775807")
        case "300,000 [ in the public basis":
            lines[2] = lines[2].replacingOccurrences(
                of: "\"publicRecordNames\":[", with: "\"publicRecordNames\":[" + deep)
        case "300,000 [ in a change": lines[3] = "{\"x\":" + deep + "," + lines[3].dropFirst()
        default: lines[0] = lines[0].replacingOccurrences(of: "\"notes\":[", with: "\"notes\":[" + deep)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test(
        "an edit that once crashed apply FILE (a count of -1, 300,000 nested arrays) is refused with exit 1, saying what and where, the store untouched",
        arguments: crashingEdits.map(\.name))
    func crashingEditRefused(_ name: String) async throws {
        let (recipe, plan) = try await pendingPlan()
        let text = try String(contentsOfFile: plan, encoding: .utf8)
        #expect(text.split(separator: "\n").first?.contains("\"zones\":1,\"changes\":1}") == true, "\(text)")
        try Self.edit(name, text).write(toFile: plan, atomically: true, encoding: .utf8)
        let applied = try await run(["apply", plan, "--yes", "--store", store])
        let says = try #require(Self.crashingEdits.first { $0.name == name }?.says)
        #expect(applied.status == 1, "\(applied.output)")
        #expect(applied.stderr.contains(says), "\(applied.stderr)")
        #expect(applied.stderr.contains("so nothing was applied"), "\(applied.stderr)")
        #expect(try await storeUntouched(recipe))
    }

    @Test(
        "an edit with its digest recomputed applies without SHARELANE_PLAN_KEY, and is refused with it set at both ends, signed or not"
    )
    func recomputedDigest() async throws {
        // Without a key the digest guards against accidents only: anyone can compute it again.
        let (recipe, plan) = try await pendingPlan()
        var text = try String(contentsOfFile: plan, encoding: .utf8)
        try Self.forged(text, keepingSignature: false) { $0.replacingOccurrences(of: "Food", with: "Hacked") }
            .write(toFile: plan, atomically: true, encoding: .utf8)
        let applied = try await run(["apply", plan, "--yes", "--store", store])
        #expect(applied.status == 0, "\(applied.output)")
        #expect(applied.stdout.contains("\"Hacked\""), "\(applied.stdout)")

        // With the key, the plan is signed; an edit that recomputes the digest, or drops the signature, is not
        // applied.
        _ = try directory.write("lists.yaml", Self.recipe(title: "Groceries"))
        #expect(try await run(["apply", recipe, "--yes", "--store", store]).status == 0)
        _ = try directory.write("lists.yaml", Self.recipe(title: "Food"))
        let keyed = ["SHARELANE_PLAN_KEY": Self.key]
        let saved = try await run(["plan", recipe, "--out", plan, "--store", store], environment: keyed)
        #expect(saved.status == 0, "\(saved.output)")
        text = try String(contentsOfFile: plan, encoding: .utf8)
        #expect(text.contains("\"signature\":\"hmac-sha256:"))
        #expect(!text.contains(Self.key) && !saved.output.contains(Self.key))
        let original = text
        for keepingSignature in [true, false] {
            try Self.forged(original, keepingSignature: keepingSignature) {
                $0.replacingOccurrences(of: "Food", with: "Hacked")
            }.write(toFile: plan, atomically: true, encoding: .utf8)
            let refused = try await run(["apply", plan, "--yes", "--store", store], environment: keyed)
            #expect(refused.status == 1, "\(refused.output)")
            #expect(
                refused.stderr.contains(
                    keepingSignature
                        ? "its signature does not match SHARELANE_PLAN_KEY: the file was changed after it was signed"
                        : "it is not signed, and SHARELANE_PLAN_KEY is set"), "\(refused.stderr)")
            #expect(!refused.output.contains(Self.key))
            #expect(try await storeUntouched(recipe))
        }
        // The plan as it was signed applies with the key; without it, it says its signature was not checked.
        try original.write(toFile: plan, atomically: true, encoding: .utf8)
        let unchecked = try await run(["apply", plan, "--store", store])
        #expect(
            unchecked.stderr.contains(
                "is signed, but SHARELANE_PLAN_KEY is not set here: its signature was not checked"))
        let signed = try await run(["apply", plan, "--yes", "--store", store], environment: keyed)
        #expect(signed.status == 0, "\(signed.output)")
        #expect(
            signed.stdout.contains("Apply complete! Resources: 0 added, 1 changed, 0 destroyed."), "\(signed.stdout)")
    }

    @Test(
        "a plan for sqlite:st.sqlite made in one folder is refused in another folder, whose file of that name is a copy"
    )
    func otherFolderRefused() async throws {
        let first = directory.url.appendingPathComponent("A")
        let second = directory.url.appendingPathComponent("B")
        for folder in [first, second] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        let recipe = try directory.write("lists.yaml", Self.recipe(title: "Groceries"))
        #expect(try await run(["apply", recipe, "--yes", "--store", "sqlite:st.sqlite"], in: first).status == 0)
        _ = try directory.write("lists.yaml", Self.recipe(title: "Food"))
        let plan = directory.file("plan.json")
        #expect(try await run(["plan", recipe, "--out", plan, "--store", "sqlite:st.sqlite"], in: first).status == 0)
        try FileManager.default.copyItem(atPath: first.path + "/st.sqlite", toPath: second.path + "/st.sqlite")

        let refused = try await run(["apply", plan, "--yes", "--store", "sqlite:st.sqlite"], in: second)
        #expect(refused.status == 1, "\(refused.output)")
        let firstFile = try #require(realpath(first.path + "/st.sqlite", nil).map { String(cString: $0) })
        let secondFile = try #require(realpath(second.path + "/st.sqlite", nil).map { String(cString: $0) })
        #expect(
            refused.stderr.contains("it was made for the SQLite file \(firstFile) (file ")
                && refused.stderr.contains("and --store sqlite:st.sqlite is the SQLite file \(secondFile) (file "),
            "\(refused.stderr)")
        let untouched = try await run(
            ["plan", recipe, "--store", "sqlite:st.sqlite", "--detailed-exitcode"], in: second)
        #expect(untouched.status == 2, "\(untouched.output)")

        let applied = try await run(["apply", plan, "--yes", "--store", "sqlite:st.sqlite"], in: first)
        #expect(applied.status == 0, "\(applied.output)")
    }

    @Test("a saved plan is its owner's alone: mode 0600")
    func ownerOnly() async throws {
        let (_, plan) = try await pendingPlan()
        let mode = try FileManager.default.attributesOfItem(atPath: plan)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// A recipe whose saved plan is tens of megabytes, written for about a second.
    static let bigRecipe = """
        sharelane: 1
        name: big
        users:
          alice: { email: alice@example.com }
        owner: alice
        zones:
          Big:
            records:
              "item-{{i}}":
                repeat: 20000
                type: Item
                fields: { title: "\(String(repeating: "x", count: 2000)) {{i}}", qty: 2 }
        """

    @Test(
        "a signal while plan --out writes leaves no temporary file and no plan, and says so",
        arguments: [SIGINT, SIGTERM])
    func interruptedWrite(_ signalNumber: Int32) throws {
        let recipe = try directory.write("big.yaml", Self.bigRecipe)
        let plan = directory.file("plan.json")
        let running = try StoppedApplyTests.Running(
            ["plan", recipe, "--out", plan, "--store", "sqlite:" + directory.file("big.sqlite")],
            environment: ["NO_COLOR": "1"])
        func partials() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.url.path)) ?? []).filter {
                $0.hasSuffix(".partial")
            }
        }
        #expect(running.wait { !partials().isEmpty }, "\(running.stderr)")
        running.signal(signalNumber)
        #expect(running.finish() == 128 + signalNumber)
        #expect(partials() == [])
        #expect(!FileManager.default.fileExists(atPath: plan))
        #expect(running.stderr.contains("Interrupted: the plan was not saved to \(plan)."), "\(running.stderr)")
    }

    @Test("an error while plan --out writes (FILE is a folder) leaves no temporary file")
    func failedWrite() async throws {
        let recipe = try directory.write("lists.yaml", Self.recipe(title: "Groceries"))
        let folder = directory.file("plan.json")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let saved = try await run(["plan", recipe, "--out", folder, "--store", store])
        #expect(saved.status == 1, "\(saved.output)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == [
                "lists.yaml", "plan.json",
            ])
    }

    @Test(
        "Ctrl-C while an apply still plans (here, waits for the store's lock) says it was interrupted and that nothing changed, exit 130"
    )
    func interruptedPlanning() throws {
        let recipe = try directory.write("lists.yaml", Self.recipe(title: "Groceries"))
        let lockPath = directory.file("store.sqlite.lock")
        let descriptor = open(lockPath, O_RDWR | O_CREAT, 0o644)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        #expect(flock(descriptor, LOCK_EX) == 0)
        for (command, done) in [("apply", "applied"), ("destroy", "destroyed")] {
            let running = try StoppedApplyTests.Running(
                [command, recipe, "--yes", "--store", store, "--lock-timeout", "2m"], environment: ["NO_COLOR": "1"])
            #expect(running.wait { running.stderr.contains("Waiting up to") }, "\(running.stderr)")
            running.signal(SIGINT)
            #expect(running.finish() == 130, "\(command)")
            #expect(
                running.stderr.contains(
                    "Interrupted while planning: nothing was \(done), and \(store) was not changed."),
                "\(command): \(running.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.file("store.sqlite")))
        }
    }
}
