import Foundation

/// The recipe JSON Schema that editors read (`Recipes/recipe.schema.json`), found beside the running binary:
/// where `make install` puts it (`PREFIX/share/sharelane/`), or in the source checkout the binary was built in.
enum RecipeSchemaFile {
    /// How the YAML language server's modeline starts; the schema's path follows.
    static let modelinePrefix = "# yaml-language-server: $schema="

    static func modeline(_ path: String) -> String { modelinePrefix + path }

    /// The schema's file name beside a recipe, as `init` writes it and the recipe's line names it.
    static let besideRecipe = "recipe.schema.json"

    /// The schema's absolute path, or nil when neither place has it.
    static func find() -> String? {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let fallback = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let binary = FileManager.default.fileExists(atPath: executable.path) ? executable : fallback
        let bin = binary.deletingLastPathComponent()
        let installed = bin.deletingLastPathComponent().appendingPathComponent("share/sharelane/recipe.schema.json")
        if FileManager.default.fileExists(atPath: installed.path) { return installed.path }
        // A build under `.build/…/debug/`: the checkout holding Package.swift above it.
        var folder = bin
        while folder.path != "/" {
            let schema = folder.appendingPathComponent("Recipes/recipe.schema.json")
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path),
                FileManager.default.fileExists(atPath: schema.path)
            {
                return schema.path
            }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }
}
