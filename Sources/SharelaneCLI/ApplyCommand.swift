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

    @Flag(help: "Apply without asking.")
    var yes = false

    @Flag(help: "Delete undeclared records and fields in every declared zone (recipes only).")
    var prune = false

    @OptionGroup var planning: PlanningOptions
    @OptionGroup var logging: LoggingOptions
    @OptionGroup var lockOptions: LockOptions

    func run() async throws {
        let logger = Logger(label: "sharelane.apply")
        // Refused for want of --yes after the plan is shown: a refused apply makes and locks nothing.
        // Nothing is written before the plan is made: a signal then ends the process, saying so.
        let planned = try await Interruptions.endingAtOnce(
            saying: "Interrupted while planning: nothing was applied, and \(planning.storeOptions.url) was not changed."
        ) {
            try await planning.planned(
                .apply(prune: prune), recipe: recipeArgument, lock: lockOptions, logger: logger,
                onlyShowing: !yes && !Terminal.stdinIsTerminal)
        }
        defer { withExtendedLifetime(planned.lock) {} }
        try await ApplyFlow(store: planned.store, planAndApply: planned.planAndApply, yes: yes, expand: planning.expand)
            .run(
                planned.plan)
        KeptUntilExit.keep(planned.plan)
    }
}
