import ArgumentParser
import Foundation
import Recipe

/// `sharelane validate RECIPE`: checks a recipe without touching a store.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a recipe without touching a store: every problem is reported as FILE:LINE:COLUMN.",
        discussion: "Exits 0 when the recipe is valid, 1 with one line per problem on standard error."
    )

    @Argument(help: "The recipe file (.yaml or .yml).")
    var recipe: String

    @Option(name: .customLong("var"), help: ArgumentHelp("Set a variable, overriding `vars:`.", valueName: "KEY=VALUE"))
    var variables: [String] = []

    @Option(name: .customLong("env"), help: ArgumentHelp("Also load .env.NAME beside the recipe.", valueName: "NAME"))
    var envName: String?

    func run() throws {
        var overrides: [String: String] = [:]
        for assignment in variables {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw ValidationError("--var takes KEY=VALUE, not `\(assignment)`")
            }
            overrides[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        let loader = RecipeLoader(overrides: overrides, envName: envName)
        do {
            let loaded = try loader.load(path: recipe)
            let records = loaded.zones.reduce(0) { $0 + $1.records.count } + loaded.publicRecords.count
            Terminal.write(
                "\(recipe): OK: recipe `\(loaded.name)`, \(plural(loaded.users.count, "user")), \(plural(loaded.zones.count, "zone")), "
                    + "\(plural(records, "record")), \(plural(loaded.lanes.count, "lane"))\n")
        } catch {
            var lines = error.errors.map(\.description)
            lines.append("\(recipe): \(plural(error.errors.count, "error")) found")
            Terminal.printError(lines.joined(separator: "\n"))
            throw ExitCode.failure
        }
    }

    private func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
}
