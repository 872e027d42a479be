import Foundation

/// A RECIPE or KEY=VALUE argument that cannot be used; the command prints it and exits 1.
struct RecipeArgumentError: Error, CustomStringConvertible {
    var description: String
}

/// The RECIPE and KEY=VALUE arguments of `run` and `lanes`, and where a recipe is found when none is named.
enum RecipeArguments {
    /// The recipe files tried, in order, when the command line names none.
    static let defaultPaths = ["Recipes/sharelane.yaml", "sharelane.yaml"]

    /// Splits arguments into an optional recipe path and `KEY=VALUE` parameters.
    /// - Throws: `RecipeArgumentError` for two recipe paths or an empty key.
    static func split(_ arguments: [String]) throws -> (path: String?, parameters: [String: String]) {
        var path: String?
        var parameters: [String: String] = [:]
        for argument in arguments {
            if let equals = argument.firstIndex(of: "="), !argument.hasSuffix(".yaml"), !argument.hasSuffix(".yml") {
                let key = String(argument[..<equals])
                guard !key.isEmpty else {
                    throw RecipeArgumentError(
                        description: "'\(argument)' has no name before '='; write parameters as KEY=VALUE")
                }
                parameters[key] = String(argument[argument.index(after: equals)...])
            } else if let first = path {
                throw RecipeArgumentError(
                    description:
                        "two recipes given ('\(first)' and '\(argument)'); name one recipe, then KEY=VALUE parameters")
            } else {
                path = argument
            }
        }
        return (path, parameters)
    }

    /// The recipe to use: the one named, or the first default that exists.
    /// - Throws: `RecipeArgumentError` naming what was looked for when there is none.
    static func resolve(_ path: String?) throws -> String {
        if let path {
            guard FileManager.default.fileExists(atPath: path) else {
                throw RecipeArgumentError(
                    description: "no recipe at \(path); check the path, or run from the directory that holds it")
            }
            return path
        }
        if let found = defaultPaths.first(where: { FileManager.default.fileExists(atPath: $0) }) {
            return found
        }
        throw RecipeArgumentError(
            description:
                "no recipe named and none found at \(defaultPaths.joined(separator: " or ")); "
                + "name one: sharelane run LANE path/to/recipe.yaml")
    }
}
