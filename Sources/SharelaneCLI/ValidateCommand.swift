import ArgumentParser
import Foundation
import Recipe

/// `sharelane validate [RECIPE]`: checks a recipe without touching a store.
struct ValidateCommand: ParsableCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a recipe without touching a store: every problem is reported as FILE:LINE:COLUMN.",
        discussion: """
            Exits 0 when the recipe is valid, 1 with one line per problem on standard error.
            """
    )

    /// What `--help` ends with.
    static let examples = [
        "sharelane validate",
        "sharelane validate Recipes/trips.yaml",
        "sharelane validate recipe.yaml --var owner_email=ann@example.com --var-file staging.yaml",
    ]

    @OptionGroup var recipeArgument: RecipeArgument

    @OptionGroup var recipeSelection: RecipeSelection

    func run() throws {
        let recipe = try RecipeSelection.resolve(recipeArgument.path)
        let loader = try recipeSelection.loader()
        do {
            let loaded = try loader.load(path: recipe)
            RecipeSelection.printWarnings(of: loaded)
            let records = loaded.zones.reduce(0) { $0 + $1.records.count } + loaded.publicRecords.count
            Terminal.write(
                "\(recipe): OK: recipe `\(loaded.name)`, \(plural(loaded.users.count, "user")), \(plural(loaded.zones.count, "zone")), "
                    + "\(plural(records, "record")), \(plural(loaded.lanes.count, "lane"))"
                    + (loaded.subscriptions.isEmpty ? "" : ", \(plural(loaded.subscriptions.count, "subscription"))")
                    + "\n")
        } catch {
            var lines = (error.warnings + error.errors).map(\.description)
            lines.append("\(recipe): \(plural(error.errors.count, "error")) found")
            Terminal.printError(lines.joined(separator: "\n"))
            throw ExitCode.failure
        }
    }

    private func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
}
