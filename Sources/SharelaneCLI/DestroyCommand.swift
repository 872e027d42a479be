import ArgumentParser
import Foundation
import Logging
import Planner
import Recipe
import ShareKit

/// `sharelane destroy [RECIPE]`: plans the removal of everything the recipe declares and owns, shows it,
/// asks, and applies it, as `terraform destroy` does.
struct DestroyCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "destroy",
        abstract:
            "Remove everything a recipe declares and owns: its zones, with their records and shares, and its public records.",
        discussion: """
            Plans the removal, shows it and asks for `yes` on a terminal (--yes skips the question, and is \
            required when standard input is not a terminal), then applies it. A declared zone goes with every \
            record and share in it, declared or not (the plan counts the undeclared ones); the default zone, \
            which cannot be deleted, loses the records the recipe declares in it. Users are left alone. A \
            following `sharelane plan` of the same recipe shows everything to add.
            """)

    /// What `--help` ends with.
    static let examples = [
        "sharelane destroy",
        "sharelane destroy Recipes/sharelane.yaml --yes --store memory:",
        "sharelane destroy --target 'zone Trips'",
    ]

    @OptionGroup var recipeArgument: RecipeArgument

    @Flag(help: "Destroy without asking.")
    var yes = false

    @OptionGroup var planning: PlanningOptions
    @OptionGroup var logging: LoggingOptions
    @OptionGroup var lockOptions: LockOptions

    func run() async throws {
        let logger = Logger(label: "sharelane.destroy")
        // Refused for want of --yes after the plan is shown: a refused destroy makes and locks nothing.
        // Nothing is deleted before the plan is made: a signal then ends the process, saying so.
        let planned = try await Interruptions.endingAtOnce(
            saying:
                "Interrupted while planning: nothing was destroyed, and \(planning.storeOptions.url) was not changed."
        ) {
            try await planning.planned(
                .destroy, recipe: recipeArgument, lock: lockOptions, logger: logger,
                onlyShowing: !yes && !Terminal.stdinIsTerminal)
        }
        defer { withExtendedLifetime(planned.lock) {} }
        try await ApplyFlow(
            store: planned.store, planAndApply: planned.planAndApply, yes: yes, destroying: true,
            expand: planning.expand
        ).run(planned.plan)
    }
}
