import ArgumentParser
import Lanes
import Recipe

/// The recipe `run` and `test` run lanes of: found, then loaded with its loading timed, each failure said on
/// standard error and ending the command with 1, where the reports a lane command writes still learn why no
/// lane started.
enum LaneRecipe {
    /// The recipe file `path` names, or the default one.
    static func path(_ path: String?) throws -> String {
        do {
            return try RecipeSelection.resolve(path)
        } catch let error as CommandFailure {
            Terminal.printError("error: \(error)")
            throw ExitCode.failure
        }
    }

    /// The loader of the recipe at `path` (again with a lane's parameters: `lane:` steps), each load timed
    /// on its own line.
    static func loader(_ selection: RecipeSelection, path: String) -> LaneRunner.RecipeReloader {
        RecipeLoadTiming.timed(selection.reloader(path: path), file: path, output: RunCommand.terminalOutput())
    }

    /// The recipe `load` makes with `overrides`, its warnings printed. A recipe that does not load is printed
    /// as its errors and handed to `unstarted` before the command ends with 1.
    static func load(
        _ load: LaneRunner.RecipeReloader, overrides: [String: String], unstarted: (_ reason: String) throws -> Void
    ) throws -> Recipe {
        do {
            let recipe = try load(overrides)
            RecipeSelection.printWarnings(of: recipe)
            return recipe
        } catch {
            Terminal.printError("\(error)")
            try unstarted("\(error)")
            throw ExitCode.failure
        }
    }
}
