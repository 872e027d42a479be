import ArgumentParser

/// The recipe a command reads, named the same way by every command: `[RECIPE]` or `--recipe FILE`, else
/// `Recipes/sharelane.yaml`, else `sharelane.yaml` (`RecipeSelection.resolve`).
struct RecipeArgument: ParsableArguments {
    @Argument(
        help: ArgumentHelp(
            "The recipe (default: Recipes/sharelane.yaml, then sharelane.yaml).", valueName: "recipe"),
        completion: .file(extensions: ["yaml", "yml"]))
    var positional: String?

    @OptionGroup var option: RecipeOption

    /// The recipe the command line names, if it names one.
    var path: String? { positional ?? option.recipe }

    func validate() throws {
        if let positional, let named = option.recipe, positional != named {
            throw ValidationError(
                "the recipe is named twice ('\(positional)' and --recipe '\(named)'); name it once")
        }
    }
}

/// `--recipe FILE`, for a command whose positional arguments are something else (`run LANE`, `schema diff`).
struct RecipeOption: ParsableArguments {
    // Every occurrence is kept, so that a second one is refused rather than silently winning.
    @Option(
        name: .customLong("recipe"),
        help: ArgumentHelp(
            "The recipe (default: Recipes/sharelane.yaml, then sharelane.yaml).", valueName: "file"),
        completion: .file(extensions: ["yaml", "yml"]))
    var recipes: [String] = []

    var recipe: String? { recipes.last }

    func validate() throws {
        if recipes.count > 1 {
            throw ValidationError(
                "--recipe is given \(recipes.count) times ("
                    + recipes.map { "'\($0)'" }.joined(separator: ", ")
                    + "); a command reads one recipe: name it once (one recipe can include others with include:)")
        }
    }
}
