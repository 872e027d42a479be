import Foundation
import SharelaneTestSupport
import Testing

/// The GitHub Actions workflow `sharelane init --ci github` writes: its plan step's script, taken from the
/// written file and run with bash as the runner would, in a real git repository with a base branch, with and
/// without the embedded store. (`.ci/run` checks the whole file with actionlint and zizmor.)
@Suite("The pull-request plan workflow", .serialized)
struct PlanWorkflowTests {
    let directory: TemporaryDirectory
    static let secret = "ck-secret-token-0123456789"

    init() throws { directory = try TemporaryDirectory("workflow") }

    /// Runs `init --ci github` and answers the written workflow.
    func workflow() async throws -> String {
        let initialized = try await SharelaneBinary.run(["init", "--ci", "github"], in: directory.url)
        #expect(initialized.status == 0, "\(initialized.output)")
        return try String(contentsOfFile: directory.file(".github/workflows/sharelane-plan.yml"), encoding: .utf8)
    }

    /// The `run: |` block of the step with `id: STEP`, its indentation removed.
    static func script(of step: String, in workflow: String) throws -> String {
        let lines = workflow.components(separatedBy: "\n")
        guard let id = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "id: \(step)" }),
            let run = lines[id...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "run: |" })
        else { throw FixtureError(message: "no step with id \(step) and a `run: |` block in the workflow") }
        let keyIndent = lines[run].prefix { $0 == " " }.count
        var body: [String] = []
        for line in lines[(run + 1)...] {
            let indent = line.prefix { $0 == " " }.count
            if !line.trimmingCharacters(in: .whitespaces).isEmpty, indent <= keyIndent { break }
            body.append(line)
        }
        let margin =
            body.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            .map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return body.map { String($0.dropFirst(min(margin, $0.count))) }.joined(separator: "\n")
    }

    /// Makes the directory a git repository whose base branch (`origin/main`, as a checkout of the whole
    /// history leaves it) holds the recipe as `init` wrote it.
    func commitTheBaseBranch() async throws {
        func git(_ arguments: String...) async throws {
            let result = try await SharelaneBinary.runProcess(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
                    + arguments, in: directory.url)
            guard result.status == 0 else { throw FixtureError(message: "git \(arguments): \(result.output)") }
        }
        try await git("init", "--quiet", "--initial-branch=main")
        try await git("add", "sharelane.yaml")
        try await git("commit", "--quiet", "-m", "The recipe")
        try await git("update-ref", "refs/remotes/origin/main", "HEAD")
    }

    /// The pull request's change: bob may only read the notes now.
    func changeTheRecipe() throws {
        let file = directory.file("sharelane.yaml")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let changed = text.replacingOccurrences(of: "permission: read-write", with: "permission: read-only")
        #expect(changed != text)
        try directory.write("sharelane.yaml", changed)
    }

    /// Runs the plan step's script with bash in the directory, with the environment the workflow gives it;
    /// answers what it printed, the comment it wrote and its step outputs.
    func runPlanStep(_ script: String, store: String?, extra: [String: String] = [:]) async throws -> (
        SharelaneBinary.Result, plan: String, outputs: String
    ) {
        let file = try directory.write("plan-step.sh", script)
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "SHARELANE_STORE")
        environment["SHARELANE"] = SharelaneBinary.executable.path
        environment["SHARELANE_RECIPE"] = "sharelane.yaml"
        environment["CLOUDKIT_API_TOKEN"] = Self.secret
        environment["CLOUDKIT_WEB_AUTH_TOKEN"] = Self.secret + "-web"
        environment["BASE_REF"] = "main"
        environment["PLAN_FILE"] = directory.file("plan.md")
        environment["GITHUB_OUTPUT"] = directory.file("github-output")
        environment["GITHUB_STEP_SUMMARY"] = directory.file("step-summary")
        environment["NO_COLOR"] = "1"
        if let store { environment["SHARELANE_STORE"] = store }
        environment.merge(extra) { _, new in new }
        try? FileManager.default.removeItem(atPath: directory.file("github-output"))
        let result = try await SharelaneBinary.runProcess(
            URL(fileURLWithPath: "/bin/bash"), ["-e", file], in: directory.url, environment: environment)
        let plan = (try? String(contentsOfFile: directory.file("plan.md"), encoding: .utf8)) ?? ""
        let outputs = (try? String(contentsOfFile: directory.file("github-output"), encoding: .utf8)) ?? ""
        return (result, plan, outputs)
    }

    /// The `comment` output as the runner reads it: the lines between `comment<<DELIMITER` and DELIMITER.
    static func commentOutput(_ outputs: String) -> String? {
        let lines = outputs.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix("comment<<") }) else { return nil }
        let delimiter = String(lines[start].dropFirst("comment<<".count))
        guard delimiter.count > 20, let end = lines[(start + 1)...].firstIndex(of: delimiter) else { return nil }
        return lines[(start + 1)..<end].joined(separator: "\n")
    }

    @Test("with no store, the comment is the plan against the base branch's recipe, read from git")
    func planStepPlansAgainstTheBaseBranch() async throws {
        let script = try await Self.script(of: "plan", in: try workflow())
        try await commitTheBaseBranch()
        try changeTheRecipe()
        let (result, plan, outputs) = try await runPlanStep(script, store: nil)
        #expect(result.status == 0, "\(result.output)")
        let lines = plan.components(separatedBy: "\n")
        #expect(
            lines.first
                == "The plan of `sharelane.yaml` against the recipe on `main`: what this pull request changes, read from git. No live store was read (set the repository variable SHARELANE_STORE to plan against one too).",
            "\(plan)")
        #expect(
            lines.contains {
                $0.hasPrefix("#### sharelane plan: `") && $0.hasSuffix("` against `sharelane.yaml` at `origin/main`")
            }, "\(plan)")
        #expect(plan.contains("**Plan: 0 to add, 1 to change, 0 to destroy.**"), "\(plan)")
        #expect(plan.contains("! participant Notes/bob"), "\(plan)")
        #expect(outputs.contains("status=2\n"), "changes present: \(outputs)")
        #expect(
            Self.commentOutput(outputs)?.trimmingCharacters(in: .newlines) == plan.trimmingCharacters(in: .newlines),
            "the job's output is the comment: \(outputs)")
        // No store was opened in the repository.
        #expect(!FileManager.default.fileExists(atPath: directory.file(".sharelane/store.sqlite")))
        for text in [result.output, plan, outputs] { #expect(!text.contains(Self.secret), "\(text)") }
    }

    @Test(
        "with a store, the comment holds the live plan first, then the plan against the base branch, saying which is which"
    )
    func planStepWritesBothPlans() async throws {
        let script = try await Self.script(of: "plan", in: try workflow())
        try await commitTheBaseBranch()
        let store = "sqlite:" + directory.file("ci.sqlite")
        try changeTheRecipe()
        let (result, plan, outputs) = try await runPlanStep(script, store: store)
        #expect(result.status == 0, "\(result.output)")
        #expect(
            plan.hasPrefix(
                "Two plans of `sharelane.yaml`: first against the live store (what `sharelane apply` would change there now), then against the recipe on `main` (what this pull request changes).\n"
            ), "\(plan)")
        // The live plan's heading names the recipe alone; the other's says what it is against.
        let live = try #require(plan.range(of: "`\n\n**Plan: 5 to add"), "\(plan)")
        let base = try #require(plan.range(of: "` against `sharelane.yaml` at `origin/main`\n"), "\(plan)")
        #expect(live.lowerBound < base.lowerBound, "the live plan first: \(plan)")
        #expect(plan[live.lowerBound..<base.lowerBound].contains("**Plan: 5 to add, 0 to change, 0 to destroy.**"))
        #expect(plan[base.lowerBound...].contains("**Plan: 0 to add, 1 to change, 0 to destroy.**"), "\(plan)")
        #expect(outputs.contains("status=2\n"), "\(outputs)")
        for text in [result.output, plan, outputs] { #expect(!text.contains(Self.secret), "\(text)") }

        // Once applied, the live plan has nothing to change; the change against the base branch remains.
        let applied = try await SharelaneBinary.run(["apply", "--yes", "--store", store], in: directory.url)
        #expect(applied.status == 0, "\(applied.output)")
        let (again, settled, _) = try await runPlanStep(script, store: store)
        #expect(again.status == 0, "\(again.output)")
        #expect(settled.contains("No changes: the store matches the recipe."), "\(settled)")
        #expect(settled.contains("**Plan: 0 to add, 1 to change, 0 to destroy.**"), "\(settled)")
    }

    @Test("a plan that fails becomes the comment, with sharelane's message, and status 1 fails the job later")
    func planStepReportsAFailure() async throws {
        let script = try await Self.script(of: "plan", in: try workflow())
        try await commitTheBaseBranch()
        try directory.write(
            "sharelane.yaml",
            "sharelane: 1\nname: broken\nzones: { A: { records: { r: { type: T, parent: nowhere } } } }\n")
        let (result, plan, outputs) = try await runPlanStep(script, store: "sqlite:" + directory.file("ci.sqlite"))
        #expect(result.status == 0, "the step itself succeeds, so the comment is posted: \(result.output)")
        #expect(plan.contains("**sharelane plan failed** for `sharelane.yaml`:"), "\(plan)")
        #expect(plan.contains("sharelane.yaml:"), "the message names its place: \(plan)")
        #expect(outputs.contains("status=1\n"), "\(outputs)")
    }

    @Test(
        "in a container job's checkout, owned by another user, the workflow's own steps let git read it",
        .enabled(if: getuid() == 0, "giving the checkout to another user takes root"))
    func planStepInAContainerJob() async throws {
        let text = try await workflow()
        let letGitRead = try Self.script(of: "checkouts", in: text)
        let script = try Self.script(of: "plan", in: text)
        try await commitTheBaseBranch()
        try changeTheRecipe()
        // sharelane's own checkout, as the second checkout leaves it.
        let build = directory.url.appendingPathComponent(".sharelane-build")
        try FileManager.default.createDirectory(at: build, withIntermediateDirectories: true)
        for arguments in [
            ["init", "--quiet", "--initial-branch=main"],
            [
                "-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "--quiet", "--allow-empty", "-m",
                "x",
            ],
        ] {
            let made = try await SharelaneBinary.runProcess(
                URL(fileURLWithPath: "/usr/bin/env"), ["git"] + arguments, in: build)
            #expect(made.status == 0, "\(made.output)")
        }
        // The runner checks out as one user and runs the container's steps as another.
        let given = try await SharelaneBinary.runProcess(
            URL(fileURLWithPath: "/usr/bin/env"), ["chown", "-R", "nobody", directory.path])
        #expect(given.status == 0, "\(given.output)")
        let home = try TemporaryDirectory("workflow-home")
        let environment = ["HOME": home.path, "GITHUB_WORKSPACE": directory.path]

        // Without the step, git refuses the repository and so does the plan.
        let refused = try await runPlanStep(script, store: nil, extra: environment)
        #expect(refused.outputs.contains("status=1\n"), "\(refused.plan)")
        #expect(refused.plan.contains("dubious ownership") || refused.plan.contains("is in none"), "\(refused.plan)")

        let file = try directory.write("let-git-read.sh", letGitRead)
        var stepEnvironment = ProcessInfo.processInfo.environment
        stepEnvironment.merge(environment) { _, new in new }
        stepEnvironment["GITHUB_OUTPUT"] = directory.file("checkouts-output")
        let marked = try await SharelaneBinary.runProcess(
            URL(fileURLWithPath: "/bin/bash"), ["-e", file], in: directory.url, environment: stepEnvironment)
        #expect(marked.status == 0, "\(marked.output)")
        let commit = try String(contentsOfFile: directory.file("checkouts-output"), encoding: .utf8)
        #expect(commit.range(of: #"^sharelane=[0-9a-f]{40}\n$"#, options: .regularExpression) != nil, "\(commit)")

        let (result, plan, outputs) = try await runPlanStep(script, store: nil, extra: environment)
        #expect(result.status == 0, "\(result.output)")
        #expect(plan.contains("**Plan: 0 to add, 1 to change, 0 to destroy.**"), "\(plan)")
        #expect(plan.contains("! participant Notes/bob"), "\(plan)")
        #expect(outputs.contains("status=2\n"), "\(outputs)")
    }

    @Test("the workflow watches every file the recipe reads: its includes, .env files and !asset files")
    func workflowWatchesWhatTheRecipeReads() async throws {
        try directory.write(
            "sharelane.yaml",
            """
            sharelane: 1
            name: watched
            include: [common/people.yaml]
            owner: ann
            zones:
              Album:
                records:
                  a1: { type: Photo, fields: { cover: !asset assets/cover.png } }
            """)
        try directory.write("common/people.yaml", "users:\n  ann: { email: ann@example.com }\n")
        try directory.write("assets/cover.png", "png")
        let text = try await workflow()
        for file in [
            "sharelane.yaml", "common/people.yaml", "assets/cover.png", ".github/workflows/sharelane-plan.yml",
        ] {
            #expect(text.contains("      - \"\(file)\"\n"), "\(file): \(text)")
        }
        #expect(!text.contains("\"Recipes/**\""), "\(text)")
        #expect(text.contains("token: ${{ secrets.SHARELANE_REPOSITORY_TOKEN || github.token }}"), "\(text)")
        #expect(text.contains("key: sharelane-${{ runner.os }}-${{ steps.checkouts.outputs.sharelane }}"), "\(text)")
    }

    @Test("the workflow pins its actions, keeps no token in checkouts, and only its comment job may write")
    func workflowShape() async throws {
        let text = try await workflow()
        #expect(text.contains("CLOUDKIT_API_TOKEN: ${{ secrets.CLOUDKIT_API_TOKEN }}"))
        #expect(text.contains("CLOUDKIT_WEB_AUTH_TOKEN: ${{ secrets.CLOUDKIT_WEB_AUTH_TOKEN }}"))
        #expect(text.contains("marker='<!-- sharelane-plan -->'"))
        #expect(text.contains("if: github.event.pull_request.head.repo.full_name == github.repository"))
        #expect(text.contains("\npermissions: {}\n"), "no permission unless a job asks: \(text)")
        // Every action is pinned to a commit, its tag beside it.
        let uses = text.components(separatedBy: "\n").filter { $0.contains("uses:") }
        // The plan job's two checkouts and cache, the test job's too and its upload of the report.
        #expect(uses.count == 7, "\(uses)")
        for line in uses {
            #expect(line.range(of: #"@[0-9a-f]{40} # v\d+\.\d+\.\d+$"#, options: .regularExpression) != nil, "\(line)")
        }
        #expect(text.components(separatedBy: "persist-credentials: false").count - 1 == 4, "\(text)")
        // No script line interpolates an expression: values reach the shell only through the environment.
        for step in ["plan", "checkouts", "test"] {
            let script = try Self.script(of: step, in: text)
            #expect(!script.contains("${{"), "\(script)")
        }
        let comment = try #require(text.range(of: "  comment:\n"))
        let test = try #require(text.range(of: "  test:\n"))
        #expect(
            !text[comment.lowerBound..<test.lowerBound].contains("checkout"),
            "the comment job runs none of the pull request's code")
        #expect(
            text[..<comment.lowerBound].contains("contents: read") && !text[..<comment.lowerBound].contains(": write"))
        #expect(
            text[test.lowerBound...].contains("contents: read") && !text[test.lowerBound...].contains(": write"),
            "the test job runs the pull request's lanes and may write nothing")
    }
}
