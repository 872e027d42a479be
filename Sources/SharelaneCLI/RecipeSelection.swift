import ArgumentParser
import Foundation
import Recipe

/// The recipe a command works on: `[RECIPE]`, `--var KEY=VALUE`, `--env NAME`.
///
/// RECIPE defaults to `Recipes/sharelane.yaml`, then `sharelane.yaml`.
struct RecipeSelection: ParsableArguments {
    @Option(name: .customLong("var"), help: ArgumentHelp("Set a variable, overriding `vars:`.", valueName: "KEY=VALUE"))
    var variables: [String] = []

    @Option(name: .customLong("env"), help: ArgumentHelp("Also load .env.NAME beside the recipe.", valueName: "NAME"))
    var envName: String?

    /// The recipe files tried, in order, when none is given.
    static let defaultPaths = ["Recipes/sharelane.yaml", "sharelane.yaml"]

    /// `path`, or the first default recipe that exists.
    /// - Throws: `CLIFailure` naming where it looked when none is given and no default exists.
    static func resolve(_ path: String?) throws -> String {
        if let path { return path }
        if let found = defaultPaths.first(where: { FileManager.default.fileExists(atPath: $0) }) { return found }
        throw CLIFailure(
            "no recipe named and none found at \(defaultPaths.joined(separator: " or ")); pass the recipe file")
    }

    /// A `KEY=VALUE` assignment (`--var`, and `run`'s trailing parameters).
    /// - Throws: `CLIFailure` for text without `=` or with nothing before it.
    static func assignment(_ text: String) throws -> (key: String, value: String) {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw CLIFailure("`\(text)` is not KEY=VALUE; write variables as KEY=VALUE")
        }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }

    /// `run`'s arguments after the lane: an optional recipe path and `KEY=VALUE` parameters.
    /// - Throws: `CLIFailure` for two recipe paths or an assignment without a key.
    static func splitRunArguments(_ arguments: [String]) throws -> (path: String?, parameters: [String: String]) {
        var path: String?
        var parameters: [String: String] = [:]
        for argument in arguments {
            if argument.contains("="), !argument.hasSuffix(".yaml"), !argument.hasSuffix(".yml") {
                let (key, value) = try assignment(argument)
                parameters[key] = value
            } else if let first = path {
                throw CLIFailure(
                    "two recipes given ('\(first)' and '\(argument)'); name one recipe, then KEY=VALUE parameters")
            } else {
                path = argument
            }
        }
        return (path, parameters)
    }

    /// Loads and validates the recipe at `path`, printing every problem on standard error.
    /// - Throws: `ExitCode.failure` when the recipe has problems.
    func load(_ path: String) throws -> Recipe {
        var overrides: [String: String] = [:]
        for text in variables {
            let (key, value) = try Self.assignment(text)
            overrides[key] = value
        }
        do {
            return try RecipeLoader(overrides: overrides, envName: envName).load(path: path)
        } catch {
            for problem in error.errors { Terminal.printError(problem.description) }
            Terminal.printError(
                "\(path): \(error.errors.count) error\(error.errors.count == 1 ? "" : "s"); nothing was planned or applied"
            )
            throw ExitCode.failure
        }
    }
}
