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
    var recipe: String? { recipeArgument.path }

    @Flag(help: "Destroy without asking.")
    var yes = false

    @OptionGroup var targetOptions: TargetOptions
    @OptionGroup var refreshOptions: RefreshOptions
    @Flag(help: "Show every record a `repeat:` made on its own lines (by default they are one line).")
    var expand = false

    @OptionGroup var parallelismOptions: ParallelismOptions
    @OptionGroup var recipeSelection: RecipeSelection
    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var logging: LoggingOptions
    @OptionGroup var lockOptions: LockOptions

    func run() async throws {
        let logger = Logger(label: "sharelane.destroy")
        let path = try RecipeSelection.resolve(recipe)
        let source = try PlanSource(
            path: path, selection: recipeSelection,
            cache: refreshOptions.cache(storeURL: storeOptions.url, recipePath: path, selection: recipeSelection),
            nothingDone: "nothing was destroyed")
        let lock = try await lockOptions.lock(storeOptions.url, operation: "destroy")
        defer { withExtendedLifetime(lock) {} }
        let parallelism = parallelismOptions.parallelism
        let store = try storeOptions.open(for: source.recipe, parallelism: parallelism, logger: logger)
        let plan: Plan
        do {
            plan = try await source.plan(
                with: Planner(store: store, logger: logger, parallelism: parallelism),
                options: PlanOptions(destroy: true, targets: targetOptions.targets))
        } catch {
            throw CLIFailure("cannot plan the removal of \(path) from \(store.displayName): \(error)")
        }
        let applier = Applier(store: store, logger: logger, parallelism: parallelism)
        try await ApplyFlow(store: store, applier: applier, yes: yes, destroying: true, expand: expand).run(plan)
    }
}
