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
        SharedDataFile.find(installed: "recipe.schema.json", inCheckout: "Recipes/recipe.schema.json")
    }
}

/// A data file sharelane reads at run time, found beside the running binary: where `make install` puts it
/// (`PREFIX/share/sharelane/`), or in the source checkout the binary was built in.
enum SharedDataFile {
    /// The file's absolute path, or nil when neither place has it.
    /// - Parameters:
    ///   - installed: its name in `PREFIX/share/sharelane/`.
    ///   - inCheckout: its path in a source checkout.
    static func find(installed: String, inCheckout: String) -> String? {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let fallback = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let binary = FileManager.default.fileExists(atPath: executable.path) ? executable : fallback
        let bin = binary.deletingLastPathComponent()
        let installedFile = bin.deletingLastPathComponent().appendingPathComponent("share/sharelane/\(installed)")
        if FileManager.default.fileExists(atPath: installedFile.path) { return installedFile.path }
        // A build under `.build/…/debug/`: the checkout holding Package.swift above it.
        var folder = bin
        while folder.path != "/" {
            let file = folder.appendingPathComponent(inCheckout)
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path),
                FileManager.default.fileExists(atPath: file.path)
            {
                return file.path
            }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }
}
