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
    /// - Throws: `CLIFailure` when none is given and no default exists.
    static func resolve(_ path: String?) throws -> String {
        if let path { return path }
        if let found = defaultPaths.first(where: { FileManager.default.fileExists(atPath: $0) }) { return found }
        throw CLIFailure(
            "no recipe given, and neither \(defaultPaths.joined(separator: " nor ")) exists here: pass the recipe file")
    }

    /// Loads and validates the recipe at `path`, printing every problem on standard error.
    /// - Throws: `ExitCode.failure` when the recipe has problems.
    func load(_ path: String) throws -> Recipe {
        var overrides: [String: String] = [:]
        for assignment in variables {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw ValidationError("--var takes KEY=VALUE, not `\(assignment)`")
            }
            overrides[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        do {
            return try RecipeLoader(overrides: overrides, envName: envName).load(path: path)
        } catch {
            for problem in error.errors { Terminal.printError(problem.description) }
            Terminal.printError("\(path): \(error.errors.count) error\(error.errors.count == 1 ? "" : "s"); nothing was planned or applied")
            throw ExitCode.failure
        }
    }
}
