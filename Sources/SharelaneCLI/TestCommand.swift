import ArgumentParser
import Foundation
import Lanes
import Logging
import Recipe
import ShareKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sharelane test [RECIPE]`: runs the lanes meant for CI, one after another, with one report.
struct TestCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Run the lanes meant for CI, one after another, in one process, with one JUnit report.",
        discussion: """
            RECIPE defaults to Recipes/sharelane.yaml, then sharelane.yaml. The lanes run are those with \
            `ci: true`; when no lane says so, every public lane. Each runs as `sharelane run` runs it, with the \
            recipe's hooks, on the same store: a lane that needs a clean store starts with `- reset` and \
            `- apply`. A failing lane does not stop the next. The JUnit report has a suite a lane and a test case \
            a step, named LANE › STEP (a step's `name:`, else its words), skipped for the steps that did not run. \
            Under GitHub Actions (GITHUB_ACTIONS=true) each lane's lines are a ::group:: and each failure an \
            ::error annotation on its line. Exit code 0 when every lane passed, 1 when one failed or could not \
            start, 128 + the signal's number (130 for Ctrl-C) when the run was asked to stop.
            """
    )

    /// What `--help` ends with.
    static let examples = [
        "sharelane test",
        "sharelane test QA/basket.yaml --store sqlite:ci.sqlite --report junit:sharelane-report.xml",
    ]

    @OptionGroup var recipeArgument: RecipeArgument
    @OptionGroup var recipeSelection: RecipeSelection
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var lockOptions: LockOptions
    @OptionGroup var logging: LoggingOptions

    /// A lane's steps print their own lines; its logs say only what went wrong.
    static let defaultLogLevel: Logger.Level = .warning

    @Option(
        name: .customLong("report"),
        help: ArgumentHelp(
            "Also write the lanes' run as a JUnit report: junit:FILE (repeatable).",
            discussion: "The file's folder must exist: it is checked before any lane runs.",
            valueName: "junit:file"))
    var report: [String] = []

    func validate() throws { _ = try reportPaths() }

    /// The files `--report` names.
    func reportPaths() throws -> [String] {
        try report.map { entry in
            guard entry.hasPrefix("junit:"), entry.count > "junit:".count else {
                throw ValidationError("--report \"\(entry)\" is not junit:FILE: write junit:sharelane-report.xml")
            }
            return String(entry.dropFirst("junit:".count))
        }
    }

    func run() async throws {
        Interruptions.install(also: [SIGHUP])
        let paths = try reportPaths()
        // A report that cannot be written is refused before anything runs, not found out after.
        try ReportFiles.refuseMissingFolders(paths)
        let onGitHub = ProcessInfo.processInfo.environment["GITHUB_ACTIONS"] == "true"
        let recipePath = try LaneRecipe.path(recipeArgument.path)
        let overrides: [String: String]
        do {
            overrides = try recipeSelection.overrides()
        } catch let error as CommandFailure {
            Terminal.printError("error: \(error)")
            throw ExitCode.failure
        }
        let load = LaneRecipe.loader(recipeSelection, path: recipePath)
        let recipe = try LaneRecipe.load(load, overrides: overrides) { reason in
            if onGitHub {
                Terminal.write(LaneReport.githubAnnotation(at: nil, lane: "recipe", message: reason) + "\n")
            }
            try write([.unstarted(lane: "recipe", recipeFile: recipePath, location: nil, reason: reason)], to: paths)
        }
        let lanes = Self.lanes(of: recipe)
        guard !lanes.isEmpty else {
            Terminal.printError("error: \(recipe.file) has no public lane to run; add one under `lanes:`")
            try write([], to: paths)
            throw ExitCode.failure
        }
        var suites: [LaneReport.Suite] = []
        var failed: [String] = []
        // Each lane that could not start is a suite of one error, annotated on the lane's line.
        func unstarted(_ lanes: [Lane], _ reason: String) {
            for lane in lanes {
                suites.append(
                    .unstarted(lane: lane.name, recipeFile: recipe.file, location: lane.location, reason: reason))
                if onGitHub {
                    Terminal.write(
                        LaneReport.githubAnnotation(at: lane.location, lane: lane.name, message: reason) + "\n")
                }
                failed.append(lane.name)
            }
        }
        do {
            let writes = lanes.contains { RunCommand.writes($0.name, in: recipe) }
            let lock = writes ? try await lockOptions.lock(storeOptions.url, operation: "test") : nil
            defer { withExtendedLifetime(lock) {} }
            let logger = Logger(label: "sharelane.lanes")
            let store = try storeOptions.open(for: recipe, logger: logger)
            let runner = LaneRunner(
                store: store, output: RunCommand.terminalOutput(), logger: logger, reload: load, overrides: overrides)
            for lane in lanes {
                if Interruptions.stoppedBySignal != nil {
                    // Asked to stop: the lanes left are reported, every step skipped.
                    suites.append(LaneReport(lane: lane.name).suite(in: recipe))
                    continue
                }
                if onGitHub { Terminal.write("::group::lane \(lane.name)\n") }
                let report: LaneReport
                do {
                    report = try await Interruptions.whileWriting("test \(lane.name)", store: store.displayName) {
                        try await runner.run(lane: lane.name, of: recipe)
                    }
                } catch {
                    if onGitHub { Terminal.write("::endgroup::\n") }
                    Terminal.printError("\(error)")
                    unstarted([lane], "\(error)")
                    continue
                }
                if onGitHub { Terminal.write("::endgroup::\n") }
                suites.append(report.suite(in: recipe, interrupted: Interruptions.stoppedBySignal != nil))
                if !report.succeeded {
                    failed.append(lane.name)
                    if onGitHub, let line = report.githubAnnotation { Terminal.write(line + "\n") }
                }
            }
        } catch let error as CommandFailure {
            Terminal.printError("error: \(error)")
            unstarted(lanes.filter { lane in !suites.contains { $0.lane == lane.name } }, "\(error)")
        } catch let error as ExitCode {
            throw error
        } catch {
            Terminal.printError("error: \(error)")
            unstarted(lanes.filter { lane in !suites.contains { $0.lane == lane.name } }, "\(error)")
        }
        try write(suites, to: paths)
        if let signal = Interruptions.stoppedBySignal {
            Terminal.write("✘ the run was asked to stop; the lanes after it were not run\n")
            throw CommandFailure.interrupted(signal: signal)
        }
        let count = lanes.count
        if failed.isEmpty {
            Terminal.write("✔ \(count) lane\(count == 1 ? "" : "s") passed\n")
            return
        }
        Terminal.write("✘ \(failed.count) of \(count) lanes failed: \(failed.joined(separator: ", "))\n")
        throw ExitCode.failure
    }

    /// The lanes `test` runs: those with `ci: true`, else every public lane, in the recipe's order.
    static func lanes(of recipe: Recipe) -> [Lane] {
        let marked = recipe.lanes.filter { $0.ci == true }
        return marked.isEmpty ? recipe.lanes.filter { !$0.isPrivate && $0.ci != false } : marked
    }

    /// Writes the JUnit report to each file.
    private func write(_ suites: [LaneReport.Suite], to paths: [String]) throws {
        let text = LaneReport.junitXML(suites: suites)
        for path in paths { try ReportFiles.write(text, format: "JUnit", to: path) }
    }
}
