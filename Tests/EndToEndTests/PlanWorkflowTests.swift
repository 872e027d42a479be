import Foundation
import SharelaneTestSupport
import Testing

/// The GitHub Actions workflow `sharelane init --ci github` writes: its plan step's script, taken from the
/// written file and run with bash as the runner would, against the embedded store. (`.ci/run` checks the
/// whole file with actionlint.)
@Suite("The pull-request plan workflow", .serialized)
struct PlanWorkflowTests {
    let directory: TemporaryDirectory
    static let secret = "ck-secret-token-0123456789"

    init() throws { directory = try TemporaryDirectory("workflow") }

    /// Runs `init --ci github` and answers the written workflow.
    func workflow() throws -> String {
        let initialized = try SharelaneBinary.run(["init", "--ci", "github"], in: directory.url)
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

    /// Runs the plan step's script with bash in the directory, with the environment the workflow gives it.
    func runPlanStep(_ script: String, store: String?) throws -> (SharelaneBinary.Result, plan: String, outputs: String)
    {
        let file = try directory.write("plan-step.sh", script)
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "SHARELANE_STORE")
        environment["SHARELANE"] = SharelaneBinary.executable.path
        environment["SHARELANE_RECIPE"] = "sharelane.yaml"
        environment["CLOUDKIT_API_TOKEN"] = Self.secret
        environment["CLOUDKIT_WEB_AUTH_TOKEN"] = Self.secret + "-web"
        environment["PLAN_FILE"] = directory.file("plan.md")
        environment["GITHUB_OUTPUT"] = directory.file("github-output")
        environment["NO_COLOR"] = "1"
        if let store { environment["SHARELANE_STORE"] = store }
        let result = try SharelaneBinary.runProcess(
            URL(fileURLWithPath: "/bin/bash"), ["-e", file], in: directory.url, environment: environment, timeout: 120)
        let plan = (try? String(contentsOfFile: directory.file("plan.md"), encoding: .utf8)) ?? ""
        let outputs = (try? String(contentsOfFile: directory.file("github-output"), encoding: .utf8)) ?? ""
        return (result, plan, outputs)
    }

    @Test("the plan step writes the markdown plan of the recipe against the store it is given, secrets unsaid")
    func planStepWritesTheMarkdownPlan() throws {
        let script = try Self.script(of: "plan", in: try workflow())
        #expect(script.contains("--format markdown"), "\(script)")
        let store = "sqlite:" + directory.file("ci.sqlite")
        let (result, plan, outputs) = try runPlanStep(script, store: store)
        #expect(result.status == 0, "\(result.output)")
        #expect(plan.hasPrefix("#### sharelane plan: `"), "\(plan)")
        #expect(plan.contains("**Plan: 5 to add, 0 to change, 0 to destroy.**"), "\(plan)")
        #expect(plan.contains("<details>") && plan.contains("```diff") && plan.contains("+ zone Notes"), "\(plan)")
        #expect(outputs.contains("status=2\n"), "changes present: \(outputs)")
        #expect(outputs.contains("file=\(directory.file("plan.md"))\n"), "\(outputs)")
        for text in [result.output, plan, outputs] { #expect(!text.contains(Self.secret), "\(text)") }

        // Once applied, the plan says so and the step says there is nothing to change.
        let applied = try SharelaneBinary.run(["apply", "--yes", "--store", store], in: directory.url)
        #expect(applied.status == 0, "\(applied.output)")
        let (again, settled, settledOutputs) = try runPlanStep(script, store: store)
        #expect(again.status == 0, "\(again.output)")
        #expect(settled.contains("No changes: the store matches the recipe."), "\(settled)")
        #expect(settledOutputs.contains("status=0\n"), "\(settledOutputs)")
    }

    @Test("a plan that fails becomes the comment, with sharelane's message, and status 1 fails the job later")
    func planStepReportsAFailure() throws {
        let script = try Self.script(of: "plan", in: try workflow())
        try directory.write(
            "sharelane.yaml",
            "sharelane: 1\nname: broken\nzones: { A: { records: { r: { type: T, parent: nowhere } } } }\n")
        let (result, plan, outputs) = try runPlanStep(script, store: "sqlite:" + directory.file("ci.sqlite"))
        #expect(result.status == 0, "the step itself succeeds, so the comment is posted: \(result.output)")
        #expect(plan.hasPrefix("**sharelane plan failed** for `sharelane.yaml`:"), "\(plan)")
        #expect(plan.contains("sharelane.yaml:"), "the message names its place: \(plan)")
        #expect(outputs.contains("status=1\n"), "\(outputs)")
    }

    @Test("without a store the step fails at once, saying which repository variable to set")
    func planStepNeedsAStore() throws {
        let script = try Self.script(of: "plan", in: try workflow())
        let (result, _, outputs) = try runPlanStep(script, store: nil)
        #expect(result.status == 1)
        #expect(result.stdout.contains("::error::set the repository variable SHARELANE_STORE"), "\(result.output)")
        #expect(outputs.isEmpty)
    }

    @Test("the workflow takes credentials from secrets, comments once by a marker, and skips forks")
    func workflowShape() throws {
        let text = try workflow()
        #expect(text.contains("CLOUDKIT_API_TOKEN: ${{ secrets.CLOUDKIT_API_TOKEN }}"))
        #expect(text.contains("CLOUDKIT_WEB_AUTH_TOKEN: ${{ secrets.CLOUDKIT_WEB_AUTH_TOKEN }}"))
        #expect(text.contains("const marker = '<!-- sharelane-plan -->';"))
        #expect(text.contains("github.rest.issues.updateComment") && text.contains("github.rest.issues.createComment"))
        #expect(text.contains("if: github.event.pull_request.head.repo.full_name == github.repository"))
        // No script line interpolates an expression: values reach the shell only through the environment.
        let script = try Self.script(of: "plan", in: text)
        #expect(!script.contains("${{"), "\(script)")
    }
}
