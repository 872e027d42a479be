import ArgumentParser
import CloudKitWire
import Foundation
import Logging
import Planner
import Recipe
import ShareKit

/// `sharelane apply`: plans a recipe (or reads a saved plan), shows it, asks, and applies it.
struct ApplyCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Apply a recipe, or a plan saved by `sharelane plan --out`, to the live store.",
        discussion: """
            Shows the plan and asks for `yes` on a terminal; --yes skips the question, and is required when \
            standard input is not a terminal. A saved plan is applied exactly, and refused, changing nothing, \
            if anything it was computed from has changed since. Writes in batches of at most 200 operations \
            and ends with a summary line; exits 1 if any change failed. Over http: and cloudkit: it waits out \
            throttling and unavailability and sends again what a lost connection may not have delivered (a \
            write that was applied is read back, never made twice); when the store cannot be reached or keeps \
            refusing past the retry budget it stops, saying what was and was not applied, and running it again \
            finishes the job.
            """)

    /// What `--help` ends with.
    static let examples = [
        "sharelane apply",
        "sharelane apply Recipes/sharelane.yaml --yes --store memory:",
        "sharelane plan --out plan.json && sharelane apply plan.json --yes",
    ]

    /// The recipe, or in its place a plan saved with `sharelane plan --out`.
    @OptionGroup var recipeArgument: RecipeArgument
    var target: String? { recipeArgument.path }

    @Flag(help: "Apply without asking.")
    var yes = false

    @Flag(help: "Delete undeclared records and fields in every declared zone (recipes only).")
    var prune = false

    @Flag(help: "Show every record a `repeat:` made on its own lines (by default they are one line).")
    var expand = false

    @OptionGroup var targetOptions: TargetOptions
    @OptionGroup var refreshOptions: RefreshOptions
    @OptionGroup var parallelismOptions: ParallelismOptions

    @OptionGroup var recipeSelection: RecipeSelection
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var logging: LoggingOptions
    @OptionGroup var lockOptions: LockOptions

    func run() async throws {
        let logger = Logger(label: "sharelane.apply")
        // The recipe is let go once planned: the apply needs only the plan, and the memory the recipe held
        // (about 40 MB at 100,000 records) serves the apply's writes instead of adding to its peak.
        let (plan, store, applier, lock) = try await planned(logger: logger)
        defer { withExtendedLifetime(lock) {} }
        try await ApplyFlow(store: store, applier: applier, yes: yes, expand: expand).run(plan)
        KeptUntilExit.keep(plan)
    }

    /// The plan to apply, the store and applier it goes to, and the store's lock, held from the plan on.
    private func planned(logger: Logger) async throws -> (Plan, any Store, Applier, StoreLock?) {
        let path = try RecipeSelection.resolve(target)
        let isSaved = SavedPlan.isSavedPlan(at: path)
        let source =
            isSaved
            ? nil
            : try PlanSource(
                path: path, selection: recipeSelection,
                cache: refreshOptions.cache(storeURL: storeOptions.url, recipePath: path, selection: recipeSelection),
                nothingDone: "nothing was planned or applied")
        // A local store is locked from the plan to the last write: another apply waits, or is told who holds it.
        let lock = try await lockOptions.lock(storeOptions.url, operation: "apply")
        if isSaved, !targetOptions.targets.isEmpty {
            throw CLIFailure("a saved plan is applied whole; --target goes with `sharelane plan --out`")
        }
        let saved: Plan?
        do {
            saved = isSaved ? try SavedPlan.read(from: path) : nil
        } catch {
            throw CLIFailure("\(error)")
        }
        // http: and cloudkit: address the recipe's container and environment, which a saved plan names too.
        let parallelism = parallelismOptions.parallelism
        let store = try storeOptions.open(
            for: source?.recipe, container: saved?.container, environment: saved?.environment,
            parallelism: parallelism, logger: logger)
        let applier = Applier(store: store, logger: logger, parallelism: parallelism)
        let plan: Plan
        do {
            if let saved {
                plan = saved
                let passedOver = try await applier.verify(plan)
                if !passedOver.isEmpty {
                    Terminal.printError(
                        "The store changed since the plan, but not in what the plan reads or writes; applying it:\n"
                            + passedOver.map { "  - \($0)" }.joined(separator: "\n"))
                }
                if let files = plan.assetFiles {
                    // The plan's `!asset` files, which `verify` found unchanged, are kept or uploaded from where
                    // it says.
                    StoreOptions.assetFiles(of: store)?.set { files[$0] }
                }
            } else if let source {
                plan = try await source.plan(
                    with: Planner(store: store, logger: logger, parallelism: parallelism),
                    options: PlanOptions(prune: prune, targets: targetOptions.targets))
            } else {
                throw CLIFailure("cannot read \(path)")
            }
        } catch let error as CLIFailure {
            throw error
        } catch {
            throw CLIFailure("\(error)")
        }
        return (plan, store, applier, lock)
    }
}

/// Shows a plan, asks, applies it and reports: `apply` and `destroy` alike.
struct ApplyFlow {
    let store: any Store
    let applier: Applier
    let yes: Bool
    /// `destroy`'s words for the question and the last line.
    var destroying = false
    /// `--expand`: every generated record on its own lines.
    var expand = false
    var command: String { destroying ? "destroy" : "apply" }

    func run(_ plan: Plan) async throws {
        let style = await Terminal.planStyle()
        if destroying, plan.isEmpty {
            // "the store matches the recipe" would read as if the recipe were applied: it matches its absence.
            Terminal.write(
                "Nothing to destroy: \(store.displayName) holds nothing that recipe \(plan.recipeName) declares.\n")
            return
        }
        // With --yes and the output going to a file or a pipe (CI, scripts), nobody reads the plan before the
        // apply starts: it is written out while the first batches are written. On a terminal it comes first.
        let renderAlongside = yes && !plan.isEmpty && !Terminal.stdoutIsTerminal
        let rendering = Task.detached {
            guard renderAlongside else { return }
            Self.writePlan(plan, style: style, expand: expand, blankLineAfter: true)
        }
        if !renderAlongside { Self.writePlan(plan, style: style, expand: expand, blankLineAfter: false) }
        if plan.isEmpty { return }

        if !yes {
            guard Terminal.stdinIsTerminal else {
                throw CLIFailure(
                    "\(command) needs --yes when standard input is not a terminal (nothing was applied): review the plan, then run `sharelane \(command) --yes`"
                )
            }
            Terminal.write(
                destroying
                    ? "\nDo you really want to destroy everything this recipe declares in \(store.displayName)?\n"
                        + "There is no undo. Only 'yes' will be accepted: "
                    : "\nDo you want to apply these changes to \(store.displayName)?\nOnly 'yes' will be accepted: ")
            guard readLine()?.trimmingCharacters(in: .whitespaces) == "yes" else {
                Terminal.printError("\(destroying ? "Destroy" : "Apply") cancelled; nothing was applied.")
                throw ExitCode.failure
            }
        }
        if !renderAlongside { Terminal.write("\n") }
        // Long applies show their progress on a terminal; any apply says so there when the store makes it
        // wait (`throttled, retrying in 3 s`).
        let showProgress = Terminal.stderrIsTerminal
        let everyStep = plan.changes.count >= 50
        var progress: (@Sendable (ApplyProgress) -> Void)? = nil
        if showProgress {
            progress = { (step: ApplyProgress) in
                guard everyStep || step.waiting != nil else { return }
                let line = "\r\u{1B}[K[\(step.completed)/\(step.total)] \(step.message)"
                FileHandle.standardError.write(Data(line.utf8))
            }
        }
        let report: ApplyReport
        do {
            report = try await applier.apply(plan, progress: progress)
        } catch {
            await rendering.value
            throw CLIFailure("\(error)")
        }
        await rendering.value
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        for line in report.failureLines() {
            Terminal.printError("error: \(line)")
        }
        if report.stopped != nil {
            for line in report.stopLines() { Terminal.printError(line) }
        } else if !report.succeeded {
            Terminal.printError("Run `sharelane plan` to see what is left; apply again once the cause is fixed.")
        }
        // The last line says what was done, once (Terraform's `Apply complete! Resources: …`); the plan's own
        // summary line, which counts the same changes as pending, is above it with the plan.
        if destroying && report.succeeded {
            Terminal.write("Destroy complete! Resources: \(report.applied.count) destroyed.\n")
        } else {
            Terminal.write(report.line + "\n")
        }
        if !report.succeeded { throw ExitCode.failure }
    }

    private static func writePlan(_ plan: Plan, style: TextStyle, expand: Bool, blankLineAfter: Bool) {
        var output = StandardOutput()
        PlanFormat.text.write(plan, style: style, expand: expand, to: &output)
        if blankLineAfter { output.write("\n") }
        output.flush()
    }
}
