import Foundation
import SharelaneTestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `sharelane test` through the built binary, as CI runs it: the lanes meant for CI in one process, one JUnit
/// report read back with Foundation's XML parser (names that survive an edit above them, skipped and
/// interrupted steps, a report when a lane cannot start), GitHub's groups and annotations, and the exit
/// codes; and the test job of the workflow `init --ci github` writes, its script run with bash.
@Suite("sharelane test", .serialized)
struct TestCommandTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory("test-command") }

    /// A recipe whose `matrix` lane (marked for CI) calls a helper lane twice and fails at a negative check;
    /// `membership` (marked too) passes; `demo` (not marked) is not run. `above` is put above every lane.
    static func recipe(above: String = "") -> String {
        """
        sharelane: 1
        name: basket
        users:
          ann: { email: ann@example.com }
          ben: { email: ben@example.com }
          cat: { email: cat@example.com }
        owner: ann
        zones:
          Basket:
            share: { participants: { ben: read-write } }
            records:
              milk: { type: Item, fields: { title: Milk } }
        \(above)
        lanes:
          sees:
            private: true
            steps:
              - expect: { as: ben, can: read, zone: Basket }
              - sh: echo seen
          matrix:
            ci: true
            steps:
              - reset
              - apply
              - lane: sees
              - lane: sees
              - expect: { as: ben, can: write, zone: Basket, to_be: false, name: ben may not write }
              - expect: { as: cat, can: read, zone: Basket, to_be: false }
              - lane: sees
          membership:
            ci: true
            steps:
              - reset
              - apply
              - accept: { as: ben, zone: Basket }
          demo:
            steps:
              - plan
        """
    }

    /// A JUnit document's suites and cases, read with Foundation's `XMLDocument`.
    struct Report {
        struct Case: Equatable {
            var name: String
            /// `failure`, `error`, `skipped`, or nil for a case that passed.
            var outcome: String?
        }

        var root: XMLElement
        var suites: [(name: String, attributes: [String: String], cases: [Case])]

        init(path: String) throws {
            let document = try XMLDocument(contentsOf: URL(fileURLWithPath: path), options: [])
            guard let root = document.rootElement() else { throw FixtureError(message: "no root element in \(path)") }
            self.root = root
            suites = root.elements(forName: "testsuite").map { suite in
                var attributes: [String: String] = [:]
                for attribute in suite.attributes ?? [] {
                    if let name = attribute.name { attributes[name] = attribute.stringValue ?? "" }
                }
                let cases = suite.elements(forName: "testcase").map { testCase in
                    Case(
                        name: testCase.attribute(forName: "name")?.stringValue ?? "",
                        outcome: (testCase.children ?? []).compactMap(\.name).first {
                            ["failure", "error", "skipped"].contains($0)
                        })
                }
                return (attributes["name"] ?? "", attributes, cases)
            }
        }

        func attribute(_ name: String) -> String? { root.attribute(forName: name)?.stringValue }
        var names: [String] { suites.flatMap { $0.cases.map(\.name) } }
    }

    func test(_ arguments: [String], recipe: String = "basket.yaml", environment: [String: String] = [:]) async throws
        -> SharelaneBinary.Result
    {
        try await SharelaneBinary.run(
            ["test", recipe, "--store", "sqlite:" + directory.file("store.sqlite")] + arguments, in: directory.url,
            environment: environment)
    }

    @Test("the lanes marked ci: true run in one report; its names stay when a line is added above them")
    func stableNames() async throws {
        _ = try directory.write("basket.yaml", Self.recipe())
        let first = try await test(["--report", "junit:" + directory.file("first.xml")])
        #expect(first.status == 1, "\(first.output)")
        #expect(first.stdout.contains("✘ 1 of 2 lanes failed: matrix"), "\(first.output)")
        let report = try Report(path: directory.file("first.xml"))
        #expect(report.suites.map(\.name) == ["lane matrix", "lane membership"], "demo is not marked for CI")
        let matrix = try #require(report.suites.first).cases
        #expect(
            matrix == [
                .init(name: "matrix › reset", outcome: nil),
                .init(name: "matrix › apply", outcome: nil),
                .init(name: "matrix › sees › expect ben can read Basket", outcome: nil),
                .init(name: "matrix › sees › sh echo seen", outcome: nil),
                .init(name: "matrix › sees › expect ben can read Basket (2)", outcome: nil),
                .init(name: "matrix › sees › sh echo seen (2)", outcome: nil),
                .init(name: "matrix › ben may not write", outcome: "failure"),
                .init(name: "matrix › expect cat cannot read Basket", outcome: "skipped"),
                .init(name: "matrix › sees › expect ben can read Basket (3)", outcome: "skipped"),
                .init(name: "matrix › sees › sh echo seen (3)", outcome: "skipped"),
            ])
        let attributes = try #require(report.suites.first).attributes
        #expect(attributes["tests"] == "10")
        #expect(attributes["failures"] == "1")
        #expect(attributes["skipped"] == "3")
        #expect(attributes["errors"] == "0")
        #expect(report.attribute("tests") == "13")
        #expect(report.suites.last?.cases.allSatisfy { $0.outcome == nil } == true)

        // Two lines above every lane, and the run again on the same store: the same names, the same outcomes.
        _ = try directory.write("basket.yaml", Self.recipe(above: "# The team's basket\nvars: { shop: corner }"))
        let second = try await test(["--report", "junit:" + directory.file("second.xml")])
        #expect(second.status == 1, "\(second.output)")
        let again = try Report(path: directory.file("second.xml"))
        #expect(again.names == report.names)
        #expect(again.suites.map(\.cases) == report.suites.map(\.cases))
    }

    @Test("without ci: marks every public lane runs; all passing exits 0")
    func everyPublicLane() async throws {
        let failing = "      - expect: { as: ben, can: write, zone: Basket, to_be: false, name: ben may not write }\n"
        let recipe = Self.recipe().replacingOccurrences(of: "    ci: true\n", with: "")
            .replacingOccurrences(of: failing, with: "")
        _ = try directory.write("basket.yaml", recipe)
        let result = try await test(["--report", "junit:" + directory.file("all.xml")])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("✔ 3 lanes passed"), "\(result.output)")
        let report = try Report(path: directory.file("all.xml"))
        #expect(report.suites.map(\.name) == ["lane matrix", "lane membership", "lane demo"], "never the private one")
        #expect(report.attribute("failures") == "0" && report.attribute("skipped") == "0")
    }

    @Test("a report in a folder that does not exist is refused before any lane runs")
    func missingReportFolder() async throws {
        _ = try directory.write("basket.yaml", Self.recipe())
        let result = try await test(["--report", "junit:missing/dir/x.xml"])
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.stderr.contains(
                "cannot write the report to missing/dir/x.xml: there is no folder missing/dir; create it"),
            "\(result.output)")
        #expect(!result.stdout.contains("▸ lane"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("store.sqlite")), "nothing ran")
    }

    @Test("on GitHub Actions each lane is a group and each failing lane an ::error on its line")
    func githubGroupsAndAnnotations() async throws {
        let recipe = Self.recipe().replacingOccurrences(
            of: "      - accept: { as: ben, zone: Basket }",
            with:
                "      - accept: { as: ben, zone: Basket }\n      - expect: { as: ben, can: delete, zone: Basket, to_be: false }"
        )
        _ = try directory.write("basket.yaml", recipe)
        let result = try await test([], environment: ["GITHUB_ACTIONS": "true"])
        #expect(result.status == 1, "\(result.output)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("::group::") } == ["::group::lane matrix", "::group::lane membership"])
        #expect(lines.filter { $0 == "::endgroup::" }.count == 2)
        let errors = lines.filter { $0.hasPrefix("::error ") }
        #expect(errors.count == 2, "\(result.output)")
        #expect(
            errors.first?.hasPrefix("::error file=basket.yaml,line=27,col=9,title=lane matrix::") == true, "\(errors)")
        #expect(
            errors.last?.hasPrefix("::error file=basket.yaml,line=36,col=9,title=lane membership::") == true,
            "\(errors)")
    }

    @Test("a recipe that does not load (a mistyped handle) still writes a report, with an error, and exits 1")
    func reportWhenTheRecipeDoesNotLoad() async throws {
        _ = try directory.write(
            "basket.yaml", Self.recipe().replacingOccurrences(of: "as: cat, can: read", with: "as: cta, can: read"))
        let result = try await test(
            ["--report", "junit:" + directory.file("broken.xml")], environment: ["GITHUB_ACTIONS": "true"])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("cta"), "\(result.output)")
        #expect(result.stdout.contains("::error title=lane recipe::"), "\(result.output)")
        let report = try Report(path: directory.file("broken.xml"))
        #expect(report.attribute("errors") == "1")
        #expect(report.suites.first?.cases == [.init(name: "recipe › start", outcome: "error")])
    }

    @Test("a store locked past --lock-timeout: every lane is an error in the report, annotated, exit 1")
    func reportWhenTheLockTimesOut() async throws {
        let hold = "\n  hold:\n    steps:\n      - reset\n      - sh: touch held; sleep 60\n"
        _ = try directory.write("basket.yaml", Self.recipe() + hold)
        let holder = try startSharelane([
            "run", "hold", "basket.yaml", "--store", "sqlite:" + directory.file("store.sqlite"),
        ])
        defer { stop(holder) }
        try await waitFor(file: "held", process: holder)
        let result = try await SharelaneBinary.run(
            [
                "test", "basket.yaml", "--store", "sqlite:" + directory.file("store.sqlite"), "--lock-timeout",
                "0s",
                "--report", "junit:" + directory.file("locked.xml"),
            ], in: directory.url, environment: ["GITHUB_ACTIONS": "true"])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("lock"), "\(result.output)")
        let report = try Report(path: directory.file("locked.xml"))
        #expect(report.suites.map(\.name) == ["lane matrix", "lane membership"])
        #expect(report.names == ["matrix › start", "membership › start"])
        #expect(report.attribute("errors") == "2")
        #expect(result.stdout.components(separatedBy: "::error file=basket.yaml,").count == 3, "\(result.output)")
    }

    @Test("Ctrl-C during a step: that step is an error, the rest skipped, the lanes after it too, exit 130")
    func interruptedRun() async throws {
        let recipe = Self.recipe().replacingOccurrences(
            of: "      - lane: sees\n      - lane: sees\n",
            with: "      - sh: touch started; sleep 60\n      - lane: sees\n")
        _ = try directory.write("basket.yaml", recipe)
        let process = try startSharelane([
            "test", "basket.yaml", "--store", "sqlite:" + directory.file("store.sqlite"), "--report",
            "junit:" + directory.file("stopped.xml"),
        ])
        defer { stop(process) }
        // Ctrl-C as soon as the step started, from a thread of its own: the step runs for a minute.
        let started = directory.file("started")
        let pid = process.processIdentifier
        let stopped = await process.once({ FileManager.default.fileExists(atPath: started) }) { kill(pid, SIGINT) }
        guard stopped != nil else { throw FixtureError(message: "the step never started: \(log())") }
        let status = try await process.statusAfterSignal("sharelane test was still running")
        #expect(status == 130, "\(log())")
        let report = try Report(path: directory.file("stopped.xml"))
        let matrix = try #require(report.suites.first).cases
        #expect(matrix.first { $0.name == "matrix › sh touch started; sleep 60" }?.outcome == "error", "\(matrix)")
        #expect(matrix.filter { $0.outcome == "skipped" }.count == 6, "\(matrix)")
        #expect(report.suites.last?.name == "lane membership")
        #expect(report.suites.last?.cases.allSatisfy { $0.outcome == "skipped" } == true, "not run after the stop")
        #expect(report.attribute("errors") == "1" && report.attribute("failures") == "0")
    }

    @Test("run --report junit names steps as test does and counts the steps a failure skipped")
    func runReportSkips() async throws {
        _ = try directory.write("basket.yaml", Self.recipe())
        let result = try await SharelaneBinary.run(
            ["run", "matrix", "basket.yaml", "--store", "memory:", "--report", "junit:" + directory.file("run.xml")],
            in: directory.url)
        #expect(result.status == 1, "\(result.output)")
        let report = try Report(path: directory.file("run.xml"))
        #expect(report.suites.count == 1)
        #expect(report.names.count == 10)
        #expect(report.names.contains("matrix › ben may not write"))
        #expect(report.attribute("skipped") == "3" && report.attribute("failures") == "1")
    }

    @Test(
        "every recipe of Recipes/ passes under sharelane test twice in a row on one store, with the same names",
        arguments: try SharelaneBinary.recipes())
    func recipesPassTwice(_ recipe: String) async throws {
        var names: [[String]] = []
        for run in 1...2 {
            let report = directory.file("run-\(run).xml")
            let result = try await SharelaneBinary.run(
                ["test", recipe, "--store", "sqlite:" + directory.file("store.sqlite"), "--report", "junit:" + report],
                in: BuiltProducts.packageRoot)
            #expect(result.status == 0, "run \(run) of \(recipe): \(result.output)")
            let read = try Report(path: report)
            #expect(read.attribute("failures") == "0" && read.attribute("errors") == "0", "\(recipe)")
            names.append(read.names)
        }
        #expect(names[0] == names[1] && !names[0].isEmpty, "\(recipe): \(names)")
    }

    @Test(
        "run: a mistyped lane still writes its reports and an ::error; a report folder that is missing is refused first"
    )
    func runReportsALaneThatCannotStart() async throws {
        _ = try directory.write("basket.yaml", Self.recipe())
        let store = "sqlite:" + directory.file("store.sqlite")
        let mistyped = try await SharelaneBinary.run(
            ["run", "matirx", "basket.yaml", "--store", store, "--report", "junit:" + directory.file("start.xml")],
            in: directory.url, environment: ["GITHUB_ACTIONS": "true"])
        #expect(mistyped.status == 1, "\(mistyped.output)")
        // After the recipe's timed loading line, the annotation.
        #expect(
            mistyped.stdout.split(separator: "\n").contains { $0.hasPrefix("::error title=lane matirx::") },
            "\(mistyped.output)")
        let report = try Report(path: directory.file("start.xml"))
        #expect(report.suites.first?.cases == [.init(name: "matirx › start", outcome: "error")])

        let missing = try await SharelaneBinary.run(
            ["run", "matrix", "basket.yaml", "--store", store + "-2", "--report", "junit:missing/dir/x.xml"],
            in: directory.url)
        #expect(missing.status == 1, "\(missing.output)")
        #expect(missing.stderr.contains("there is no folder missing/dir"), "\(missing.output)")
        #expect(!missing.stdout.contains("▸ lane"), "no step ran: \(missing.output)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("store.sqlite-2")), "nothing was written")
    }

    @Test("hooks' steps are named under the hook, a lane a hook calls under it; after_all is skipped on failure")
    func hooksInTheReport() async throws {
        _ = try directory.write(
            "hooks.yaml",
            """
            sharelane: 1
            name: hooks
            users:
              ann: { email: ann@example.com }
              ben: { email: ben@example.com }
            owner: ann
            zones:
              Box:
                share: { participants: { ben: read-write } }
            before_all:
              - reset
              - lane: prepare
            after_all:
              - sh: echo done
            error:
              - sh: echo failed
            lanes:
              prepare:
                private: true
                steps:
                  - apply
              go:
                steps:
                  - expect: { as: ben, can: read, zone: Box }
                  - expect: { as: ben, can: write, zone: Box, to_be: false }
                  - plan
            """)
        let result = try await test(["--report", "junit:" + directory.file("hooks.xml")], recipe: "hooks.yaml")
        #expect(result.status == 1, "\(result.output)")
        let report = try Report(path: directory.file("hooks.xml"))
        #expect(
            report.suites.first?.cases == [
                .init(name: "go › before_all › reset", outcome: nil),
                .init(name: "go › before_all › prepare › apply", outcome: nil),
                .init(name: "go › expect ben can read Box", outcome: nil),
                .init(name: "go › expect ben cannot write Box", outcome: "failure"),
                .init(name: "go › plan", outcome: "skipped"),
                .init(name: "go › after_all › sh echo done", outcome: "skipped"),
                .init(name: "go › error › sh echo failed", outcome: nil),
            ])
    }

    // MARK: - The workflow's test job

    /// Runs the test job's `run` step of the workflow in the directory as the runner would: bash, with the
    /// step's environment and the runner's temporary folder.
    func runTestStep(recipe: String) async throws -> SharelaneBinary.Result {
        let workflow = try String(
            contentsOfFile: directory.file(".github/workflows/sharelane-plan.yml"), encoding: .utf8)
        let script = try PlanWorkflowTests.script(of: "test", in: workflow)
        #expect(workflow.contains("SHARELANE_RECIPE: \(recipe)\n          REPORT_FILE: sharelane-report.xml"))
        #expect(workflow.contains("path: sharelane-report.xml"), "the report the job writes is the one it keeps")
        let file = try directory.write("test-step.sh", script)
        try FileManager.default.createDirectory(
            atPath: directory.file("runner-temp"), withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "SHARELANE_STORE")
        environment["SHARELANE"] = SharelaneBinary.executable.path
        environment["SHARELANE_RECIPE"] = recipe
        environment["REPORT_FILE"] = "sharelane-report.xml"
        environment["RUNNER_TEMP"] = directory.file("runner-temp")
        environment["GITHUB_ACTIONS"] = "true"
        return try await SharelaneBinary.runProcess(
            URL(fileURLWithPath: "/bin/bash"), ["-e", file], in: directory.url, environment: environment)
    }

    @Test("init --ci github --recipe QA/basket.yaml: no starter; the test job runs its lanes and writes the report")
    func workflowTestsTheNamedRecipe() async throws {
        try FileManager.default.createDirectory(atPath: directory.file("QA"), withIntermediateDirectories: true)
        _ = try directory.write("QA/basket.yaml", Self.recipe())
        let initialized = try await SharelaneBinary.run(
            ["init", "--ci", "github", "--recipe", "QA/basket.yaml"], in: directory.url)
        #expect(initialized.status == 0, "\(initialized.output)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("sharelane.yaml")), "no starter recipe")
        let failing = try await runTestStep(recipe: "QA/basket.yaml")
        #expect(failing.status == 1, "the job fails with the lane: \(failing.output)")
        #expect(failing.stdout.contains("::error file=QA/basket.yaml,line="), "\(failing.output)")
        let report = try Report(path: directory.file("sharelane-report.xml"))
        #expect(report.attribute("failures") == "1")

        // Fixed, and run again on the job's store: green twice in a row.
        _ = try directory.write(
            "QA/basket.yaml",
            Self.recipe().replacingOccurrences(of: "ben: read-write } }", with: "ben: read-only } }")
                .replacingOccurrences(of: "  - accept: { as: ben, zone: Basket }", with: "  - plan"))
        for _ in 0..<2 {
            let passing = try await runTestStep(recipe: "QA/basket.yaml")
            #expect(passing.status == 0, "\(passing.output)")
            #expect(try Report(path: directory.file("sharelane-report.xml")).attribute("failures") == "0")
        }
    }

    @Test("the starter's workflow: its test job passes on the starter recipe as init wrote it")
    func workflowTestsTheStarter() async throws {
        let initialized = try await SharelaneBinary.run(["init", "--ci", "github"], in: directory.url)
        #expect(initialized.status == 0, "\(initialized.output)")
        let result = try await runTestStep(recipe: "sharelane.yaml")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("::group::lane check"), "\(result.output)")
        let report = try Report(path: directory.file("sharelane-report.xml"))
        #expect(report.suites.map(\.name) == ["lane check"])
        #expect(report.attribute("failures") == "0" && report.attribute("skipped") == "0")
    }

    // MARK: - Processes

    /// Starts `sharelane ARGUMENTS` in the directory, its output in `process.log`.
    func startSharelane(_ arguments: [String]) throws -> StartedProcess {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "SHARELANE_STORE")
        return try StartedProcess(
            arguments, in: directory.url, environment: environment,
            log: directory.url.appendingPathComponent("process.log"))
    }

    func log() -> String {
        (try? String(contentsOfFile: directory.file("process.log"), encoding: .utf8)) ?? ""
    }

    /// Waits, up to `TestDeadlines.event`, until a step of `process` wrote `file`.
    func waitFor(file: String, process: StartedProcess) async throws {
        guard await process.waitUntil({ FileManager.default.fileExists(atPath: directory.file(file)) }) else {
            throw FixtureError(message: "the step never started: \(log())")
        }
    }

    /// Ends a process this test started, and its step's group, if it still runs.
    func stop(_ process: StartedProcess) { process.killBlocking() }
}
