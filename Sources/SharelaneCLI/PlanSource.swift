import Foundation
import Logging
import PlanModel
import Planner
import Recipe

/// The recipe `plan`, `apply` and `destroy` plan: loaded from its files, or, when the plan's cache file
/// remembers it and its files and variables are unchanged since, taken from the cache without loading it
/// (Docs/Plans.md, "Incremental plans").
struct PlanSource {
    let path: String
    let selection: RecipeSelection
    var cache: PlanCache?
    private let unchanged: UnchangedRecipe?
    private let loaded: (recipe: Recipe, inputs: RecipeInputs)?

    /// Loads the recipe at `path` unless the cache remembers it unchanged; prints its warnings either way,
    /// and its problems (then throws) when it is loaded.
    /// - Throws: `ExitCode.failure` for a recipe with problems.
    init(path: String, selection: RecipeSelection, cache: PlanCache?, nothingDone: String) throws {
        self.path = path
        self.selection = selection
        self.cache = cache
        unchanged = cache?.unchangedRecipe()
        if let unchanged {
            loaded = nil
            RecipeSelection.printWarnings(of: unchanged.recipe)
        } else {
            loaded = try selection.loadWithInputs(path, nothingDone: nothingDone)
        }
    }

    /// The recipe, or, taken from the cache, the recipe without its zones' records: enough to open its
    /// store (container and environment) and to name it.
    var recipe: Recipe { loaded?.recipe ?? unchanged?.recipe ?? Recipe(name: "", file: path, users: [], owner: "") }

    /// The plan of the recipe against the store of `planner`.
    /// - Throws: what the planner throws.
    func plan(with planner: Planner, options: PlanOptions) async throws -> Plan {
        var options = options
        options.cache = cache
        if let loaded { return try await planner.plan(loaded.recipe, inputs: loaded.inputs, options: options) }
        guard let unchanged else { return try await planner.plan(recipe, options: options) }
        // The files are unchanged, so they load without problems or new warnings.
        let loader = try selection.loader()
        return try await planner.plan(unchanged, options: options) { try loader.loadWithInputs(path: path) }
    }
}
