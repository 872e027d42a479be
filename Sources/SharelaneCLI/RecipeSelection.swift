import ArgumentParser
import Foundation
import Lanes
import Recipe

/// The recipe a command works on: `[RECIPE]`, `--var KEY=VALUE`, `--var-file FILE`, `--env NAME`.
///
/// RECIPE defaults to `Recipes/sharelane.yaml`, then `sharelane.yaml`. Variables, as Terraform takes them:
/// the files of `--var-file` in order, then `--var`, each later one winning.
struct RecipeSelection: ParsableArguments {
    @Option(name: .customLong("var"), help: ArgumentHelp("Set a variable, overriding `vars:`.", valueName: "KEY=VALUE"))
    var variables: [String] = []

    @Option(
        name: .customLong("var-file"),
        help: ArgumentHelp(
            "Set the variables of a YAML file of `name: value` lines (before --var).", valueName: "FILE"),
        completion: .file(extensions: ["yaml", "yml"]))
    var variableFiles: [String] = []

    @Option(name: .customLong("env"), help: ArgumentHelp("Also load .env.NAME beside the recipe.", valueName: "NAME"))
    var envName: String?

    /// Loads the recipe at `path` again with other variables, as `run` and `serve --recipe` hand it to their
    /// lanes (a `lane:` step with parameters): the process's environment and `--env` as given.
    func reloader(path: String) -> LaneRunner.RecipeReloader {
        let environment = ProcessInfo.processInfo.environment
        let envName = self.envName
        let fromFiles = fileOnlyValues()
        return { overrides in
            var loader = RecipeLoader(environment: environment, overrides: overrides, envName: envName)
            loader.fileOnlyOverrides = Set(fromFiles.keys.filter { overrides[$0] == fromFiles[$0] })
            return try loader.load(path: path)
        }
    }

    /// The recipe files tried, in order, when none is given.
    static let defaultPaths = ["Recipes/sharelane.yaml", "sharelane.yaml"]

    /// `path`, or the first default recipe that exists.
    /// - Throws: `CommandFailure` naming where it looked when none is given and no default exists.
    static func resolve(_ path: String?) throws -> String {
        if let path { return path }
        if let found = defaultPaths.first(where: { FileManager.default.fileExists(atPath: $0) }) { return found }
        throw CommandFailure.usage(
            "no recipe named and none found at \(defaultPaths.joined(separator: " or ")); pass the recipe file")
    }

    /// A `KEY=VALUE` assignment (`--var`, and `run`'s trailing parameters).
    /// - Throws: `CommandFailure` for text without `=` or with nothing before it.
    static func assignment(_ text: String) throws -> (key: String, value: String) {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw CommandFailure.usage("`\(text)` is not KEY=VALUE; write variables as KEY=VALUE")
        }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }

    /// `run`'s arguments after the lane: an optional recipe path and `KEY=VALUE` parameters.
    /// - Throws: `CommandFailure` for two recipe paths or an assignment without a key.
    static func splitRunArguments(_ arguments: [String]) throws -> (path: String?, parameters: [String: String]) {
        var path: String?
        var parameters: [String: String] = [:]
        for argument in arguments {
            if argument.contains("="), !argument.hasSuffix(".yaml"), !argument.hasSuffix(".yml") {
                let (key, value) = try assignment(argument)
                parameters[key] = value
            } else if let first = path {
                throw CommandFailure.usage(
                    "two recipes given ('\(first)' and '\(argument)'); name one recipe, then KEY=VALUE parameters")
            } else {
                path = argument
            }
        }
        return (path, parameters)
    }

    /// Prints the recipe's warnings on standard error, each as `FILE:LINE:COLUMN: warning: …`.
    static func printWarnings(of recipe: Recipe) {
        for warning in recipe.warnings { Terminal.printError(warning.description) }
    }

    /// The variables given on the command line: `--var-file`s in order, then `--var`s, later ones winning.
    /// - Throws: `CommandFailure` for a `--var` that is not KEY=VALUE; `ExitCode.failure` after printing what is
    ///   wrong with a variable file.
    func overrides() throws -> [String: String] {
        var overrides: [String: String] = [:]
        for file in variableFiles {
            do {
                for (key, value) in try VariableFile.load(path: file) { overrides[key] = value }
            } catch {
                for problem in error.errors { Terminal.printError(problem.description) }
                throw ExitCode.failure
            }
        }
        for text in variables {
            let (key, value) = try Self.assignment(text)
            overrides[key] = value
        }
        return overrides
    }

    /// A loader with these variables and `.env.NAME`, plus `extra` variables that win over them (`run`'s
    /// trailing KEY=VALUE parameters).
    /// - Throws: as `overrides()`.
    func loader(extra: [String: String] = [:]) throws -> RecipeLoader {
        var loader = RecipeLoader(overrides: try overrides().merging(extra) { _, new in new }, envName: envName)
        loader.fileOnlyOverrides = Set(fileOnlyValues().keys).subtracting(extra.keys)
        return loader
    }

    /// The values that only `--var-file`s set (no `--var` sets them too): a file may hold several recipes'
    /// variables, so a name the recipe does not read is a warning, not an error.
    private func fileOnlyValues() -> [String: String] {
        var values: [String: String] = [:]
        for file in variableFiles {
            for (key, value) in (try? VariableFile.load(path: file)) ?? [] { values[key] = value }
        }
        for text in variables {
            if let assignment = try? Self.assignment(text) { values[assignment.key] = nil }
        }
        return values
    }

    /// Loads and validates the recipe at `path`, printing every problem on standard error.
    /// - Throws: `ExitCode.failure` when the recipe has problems.
    /// The recipe `path` names, else the default recipe when there is one; nil when there is none (for the
    /// commands that read a store and use a recipe only for its handles, container and environment).
    func loadIfAny(_ path: String?) throws -> Recipe? {
        if let path { return try load(path) }
        guard let found = try? Self.resolve(nil) else { return nil }
        return try load(found)
    }

    func load(_ path: String, nothingDone: String = "nothing was planned or applied") throws -> Recipe {
        try loadWithInputs(path, nothingDone: nothingDone).recipe
    }

    /// Loads and validates the recipe at `path` as `load` does, with what it was made from.
    /// - Throws: `ExitCode.failure` when the recipe has problems.
    func loadWithInputs(_ path: String, nothingDone: String = "nothing was planned or applied") throws -> (
        recipe: Recipe, inputs: RecipeInputs
    ) {
        let loader = try loader()
        do {
            let loaded = try loader.loadWithInputs(path: path)
            Self.printWarnings(of: loaded.recipe)
            return loaded
        } catch {
            for problem in error.warnings + error.errors { Terminal.printError(problem.description) }
            Terminal.printError(
                "\(path): \(error.errors.count) error\(error.errors.count == 1 ? "" : "s")\(nothingDone.isEmpty ? "" : "; " + nothingDone)"
            )
            throw ExitCode.failure
        }
    }
}
