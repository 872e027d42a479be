import ArgumentParser
import ChildProcesses
import Foundation
import Recipe

/// `sharelane actions [RECIPE]`: the steps a lane can take, built in and from outside; `sharelane actions NAME`:
/// one step's page.
struct ActionsCommand: AsyncParsableCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "actions",
        abstract: "List the steps a lane can take, or print one step's page: its keys and an example.",
        discussion: """
            With an action's name, prints what it does, its keys (required or optional, and what each means) and \
            an example step; an unknown name is an error. An outside action is an executable sharelane-NAME in \
            the recipe's actions/ folder or on PATH, as git finds its subcommands; a lane step `- NAME: {…}` runs \
            it with the step's parameters as JSON on standard input. Its one-line description is what \
            `sharelane-NAME --describe` prints. See Docs/Lanes.md.
            """)

    static let examples = [
        "sharelane actions", "sharelane actions Recipes/lanes-that-script.yaml", "sharelane actions permission",
        "sharelane actions notify --recipe Recipes/lanes-that-script.yaml",
    ]

    @Argument(
        help: ArgumentHelp(
            "An action's name, to print its page; or the recipe whose actions/ folder is searched.",
            valueName: "name-or-recipe"))
    var first: String?

    @Argument(help: ArgumentHelp("The recipe, after an action's name.", valueName: "recipe"))
    var second: String?

    @OptionGroup var option: RecipeOption

    /// A word names a recipe when it reads as a file: a YAML name, a path, or a file that exists.
    static func namesRecipe(_ word: String) -> Bool {
        word.hasSuffix(".yaml") || word.hasSuffix(".yml") || word.contains("/")
            || FileManager.default.fileExists(atPath: word)
    }

    func run() async throws {
        var action: String? = nil
        var recipes: [String] = []
        if let first {
            if Self.namesRecipe(first) { recipes.append(first) } else { action = first }
        }
        if let second {
            guard action != nil else {
                throw CommandFailure.usage(
                    "`\(second)` follows the recipe \(first ?? ""); name an action first: sharelane actions NAME [RECIPE]"
                )
            }
            recipes.append(second)
        }
        if let named = option.recipe { recipes.append(named) }
        guard Set(recipes).count <= 1 else {
            throw CommandFailure.usage(
                "the recipe is named twice (" + recipes.map { "'\($0)'" }.joined(separator: " and ") + "); name it once"
            )
        }
        if let recipe = recipes.first, !FileManager.default.fileExists(atPath: recipe) {
            throw CommandFailure.input("there is no recipe at \(recipe); name an existing file, or leave it out")
        }
        let directory = recipes.first.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path } ?? "."
        let found = OutsideActions.found(recipeDirectory: directory)
        if let action {
            try await printPage(action, found: found, directory: directory)
            return
        }
        var lines = ["Built in:"]
        let width = StepPages.names.map(\.count).max() ?? 0
        for name in StepPages.names {
            lines.append(
                "  " + name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + StepPages.summary(name))
        }
        lines.append("")
        if found.isEmpty {
            lines.append(
                "From outside: none found (an executable sharelane-NAME in \(directory)/actions/ or on PATH)")
        } else {
            lines.append("From outside:")
            let outsideWidth = found.map(\.name.count).max() ?? 0
            for action in found {
                lines.append(
                    "  " + action.name.padding(toLength: outsideWidth + 2, withPad: " ", startingAt: 0)
                        + (await Self.describe(action.executable)) + "  (" + action.executable.path + ")")
            }
        }
        lines.append("")
        lines.append("`sharelane actions NAME` prints an action's keys and an example.")
        Terminal.write(lines.joined(separator: "\n") + "\n")
    }

    /// Prints the page of the built-in or outside action `name`, or fails with the nearest name.
    func printPage(_ name: String, found: [OutsideActions.Found], directory: String) async throws {
        if let page = StepPages.page(name) {
            Terminal.write(StepPages.text(page) + "\n")
            return
        }
        if let outside = found.first(where: { $0.name == name }) {
            // An outside action declares no keys to sharelane: it reads whatever the step gives it.
            let lines = [
                "\(name): \(await Self.describe(outside.executable))", "",
                "An outside action: \(outside.executable.path)",
                "Keys: whatever it reads from the JSON object on its standard input (the step's keys), and",
                "  register  optional  keep the JSON object it prints as `${NAME}` for later steps", "",
                "Example:", "  - \(name): { register: result }", "", "See Docs/Lanes.md.",
            ]
            Terminal.write(lines.joined(separator: "\n") + "\n")
            return
        }
        let known = StepPages.names + found.map(\.name)
        throw CommandFailure.input(
            "there is no action `\(name)`" + Suggestion.hint(for: name, in: known)
                + " (`sharelane actions` lists them; an outside one is an executable sharelane-\(name) in "
                + "\(directory)/actions/ or on PATH)")
    }

    /// The first line `EXECUTABLE --describe` prints, or a note that it prints none (within a few seconds).
    static func describe(_ executable: URL) async -> String {
        let finished: ChildProcess.Finished
        do {
            finished = try await ChildProcess([executable.path, "--describe"], grace: .seconds(1))
                .run(output: .collected(received: nil), timeout: .seconds(5))
        } catch {
            return "(cannot run it)"
        }
        if finished.timedOut { return "(no description: --describe did not answer)" }
        let text = String(decoding: finished.standardOutput, as: UTF8.self)
        let first = text.split(separator: "\n").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        return first.isEmpty ? "(no description)" : first
    }
}
