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
    @Option(
        name: .customLong("recipe"),
        help: ArgumentHelp(
            "The recipe (default: Recipes/sharelane.yaml, then sharelane.yaml).", valueName: "file"),
        completion: .file(extensions: ["yaml", "yml"]))
    var recipe: String?
}
