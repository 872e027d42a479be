import ArgumentParser
import Foundation
import Lanes
import Logging
import Rainbow
import Recipe
import ShareKit

/// `sharelane run LANE [RECIPE] [KEY=VALUE…]`: runs a lane of a recipe.
struct RunCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a lane of a recipe: its steps, acting as the recipe's users, with the recipe's hooks.",
        discussion: """
            RECIPE defaults to Recipes/sharelane.yaml, then sharelane.yaml. KEY=VALUE arguments set variables \
            that override the recipe's `vars`, as --var and --var-file do (the trailing ones win). Each step \
            prints a line with its outcome and time; the first failing step stops the lane with exit code 1 and \
            its place in the recipe. Ctrl-C, SIGTERM and SIGHUP (a closed terminal) stop the lane after the step \
            under way and are passed on, as they came, to the process group of that step's command; the exit \
            code is then 128 + the signal's number (130, 143, 129). A step's processes end with sharelane even \
            when it is killed outright.
            """
    )

    /// What `--help` ends with.
    static let examples = [
        "sharelane run demo",
        "sharelane run walkthrough Recipes/topics-notes.yaml --store memory:",
        "sharelane run check recipe.yaml title=\"From the command line\" --var-file staging.yaml",
    ]

    @Argument(help: "The lane to run.", completion: RecipeCompletion.lanes)
    var lane: String

    @Argument(help: ArgumentHelp("The recipe file, then any KEY=VALUE parameters.", valueName: "RECIPE|KEY=VALUE"))
    var arguments: [String] = []

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var logging: LoggingOptions

    /// A lane's steps print their own lines; its logs say only what went wrong.
    static let defaultLogLevel: Logger.Level = .warning
    @OptionGroup var lockOptions: LockOptions

    @OptionGroup var recipeSelection: RecipeSelection
    @OptionGroup var recipeOption: RecipeOption

    @Option(
        name: .customLong("report"),
        help: ArgumentHelp(
            "Also write the run as a report for CI: junit:FILE or json:FILE (repeatable).",
            discussion:
                "JUnit: one test case a step, named LANE › STEP as `sharelane test` names it, the steps a failure "
                + "left skipped; a failed expectation a failure with its message and FILE:LINE:COLUMN; times in "
                + "seconds. Under GitHub Actions (GITHUB_ACTIONS=true) a failed step "
                + "also prints an ::error annotation on its line.",
            valueName: "format:file"))
    var report: [String] = []

    /// The reports `--report` asks for.
    func reports() throws -> [(format: String, path: String)] { try ReportFiles.requests(report) }

    func validate() throws { _ = try reports() }

    func run() async throws {
        // A closed terminal (SIGHUP) stops the lane as Ctrl-C does, and reaches the step's programs, which are in
        // a group of their own that the terminal's hangup does not reach.
        Interruptions.install(also: [SIGHUP])
        try ReportFiles.refuseMissingFolders(try reports().map(\.path))
        let parameters: [String: String]
        let recipePath: String
        do {
            let split = try RecipeSelection.splitRunArguments(arguments)
            // --var-file, then --var, then the trailing KEY=VALUE parameters: later ones win.
            parameters = try recipeSelection.overrides().merging(split.parameters) { _, new in new }
            if let positional = split.path, let named = recipeOption.recipe, positional != named {
                throw CommandFailure.usage(
                    "the recipe is named twice ('\(positional)' and --recipe '\(named)'); name it once")
            }
            recipePath = try LaneRecipe.path(split.path ?? recipeOption.recipe)
        } catch let error as CommandFailure {
            Terminal.printError("error: \(error)")
            throw ExitCode.failure
        }
        let load = LaneRecipe.loader(recipeSelection, path: recipePath)
        let recipe = try LaneRecipe.load(load, overrides: parameters) { reason in
            unstarted(recipeFile: recipePath, location: nil, reason: reason)
        }
        // A lane that writes (apply, accept, leave, save, delete, reset) locks a local store as apply does.
        let lock = try await beforeTheLane(recipe) {
            Self.writes(lane, in: recipe) ? try await lockOptions.lock(storeOptions.url, operation: "run \(lane)") : nil
        }
        defer { withExtendedLifetime(lock) {} }
        let logger = Logger(label: "sharelane.lanes")
        let store = try storeOptions.open(for: recipe, logger: logger)
        let runner = LaneRunner(
            store: store, output: Self.terminalOutput(), logger: logger, reload: load, overrides: parameters)
        do {
            let report = try await Interruptions.whileWriting("run \(lane)", store: store.displayName) {
                try await runner.run(lane: lane, of: recipe)
            }
            try write(report, recipe: recipe)
            if let signal = Interruptions.stoppedBySignal { throw CommandFailure.interrupted(signal: signal) }
            if !report.succeeded {
                if ProcessInfo.processInfo.environment["GITHUB_ACTIONS"] == "true", let line = report.githubAnnotation {
                    Terminal.write(line + "\n")
                }
                throw ExitCode.failure
            }
        } catch let error as LaneError {
            Terminal.printError("\(error)")
            unstarted(recipeFile: recipe.file, location: recipe.lane(lane)?.location, reason: "\(error)")
            throw ExitCode.failure
        }
    }

    /// Writes the reports `--report` asks for, secrets masked as in everything the command line writes.
    private func write(_ report: LaneReport, recipe: Recipe) throws {
        for (format, path) in try reports() {
            let text =
                format == "junit"
                ? report.junitXML(recipe: recipe, interrupted: Interruptions.stoppedBySignal != nil)
                : String(decoding: try report.json(recipeFile: recipe.file), as: UTF8.self)
            do {
                try SecretMask.apply(text).write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                Terminal.printError(
                    "error: cannot write the \(format) report to \(path): \(error.localizedDescription)")
                throw ExitCode.failure
            }
        }
    }

    /// Whether the lane, its hooks or a lane it calls has a step that writes to the store.
    static func writes(_ lane: String, in recipe: Recipe) -> Bool {
        var seen: Set<String> = []
        func writes(_ steps: [Step]) -> Bool {
            steps.contains { step in
                switch step.action {
                case .apply, .accept, .acceptURL, .leave, .removeParticipant, .changePermission, .save, .delete, .reset,
                    .deploySchema, .subscribe:
                    return true
                // A command or an outside action writes through its own process, which takes the lock itself.
                case .plan, .expect, .export, .query, .sh, .outside: return false
                case .lane(let name, _):
                    guard seen.insert(name).inserted, let called = recipe.lane(name) else { return false }
                    return writes(called.steps)
                }
            }
        }
        seen.insert(lane)
        let steps = recipe.lane(lane)?.steps ?? []
        return writes(
            recipe.beforeAll + recipe.beforeEach + steps + recipe.afterEach + recipe.afterAll + recipe.onError)
    }

    /// Standard output, with ✔ in green and ✘ and error lines in red on a terminal (unless `NO_COLOR` is set).
    static func terminalOutput() -> LaneOutput {
        guard Terminal.wantsColor else { return LaneOutput { Terminal.write($0 + "\n") } }
        return LaneOutput(showsColour: true) { line in
            var text = line
            if let range = text.range(of: "✔") {
                text.replaceSubrange(range, with: "✔".green)
            } else if let range = text.range(of: "✘") {
                text.replaceSubrange(range, with: "✘".red)
            } else if text.contains(": error: ") {
                text = text.red
            }
            Terminal.write(text + "\n")
        }
    }
}
