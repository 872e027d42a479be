import ArgumentParser
import Foundation
import Lanes
import Recipe

/// `sharelane lanes [RECIPE]`: lists a recipe's lanes with their descriptions.
struct LanesCommand: AsyncParsableCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "lanes",
        abstract: "List the lanes of a recipe with their descriptions.",
        discussion: """
            RECIPE defaults to Recipes/sharelane.yaml, then sharelane.yaml. Private lanes are hidden unless --all.
            """
    )

    /// What `--help` ends with.
    static let examples = [
        "sharelane lanes",
        "sharelane lanes Recipes/topics-notes.yaml --all --json",
    ]

    @OptionGroup var recipeArgument: RecipeArgument
    var recipe: String? { recipeArgument.path }

    @Flag(name: .long, help: "Also list private lanes (callable only from other lanes).")
    var all = false

    @Flag(name: .long, help: "Print the lanes as JSON: [{name, desc, private}].")
    var json = false

    @OptionGroup var recipeSelection: RecipeSelection

    func run() async throws {
        let path: String
        do {
            path = try RecipeSelection.resolve(recipe)
        } catch {
            Terminal.printError("error: \(error)")
            throw ExitCode.failure
        }
        let loaded: Recipe
        do {
            loaded = try recipeSelection.loader().load(path: path)
        } catch {
            Terminal.printError("\(error)")
            throw ExitCode.failure
        }
        if json {
            Terminal.write(try LaneListing.json(of: loaded, includePrivate: all) + "\n")
        } else {
            Terminal.write(LaneListing.text(of: loaded, includePrivate: all) + "\n")
        }
    }
}
