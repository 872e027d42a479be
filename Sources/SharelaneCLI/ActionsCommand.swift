import ArgumentParser
import ChildProcesses
import Foundation
import Recipe

/// `sharelane actions [RECIPE]`: the steps a lane can take, built in and from outside.
struct ActionsCommand: AsyncParsableCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "actions",
        abstract: "List the steps a lane can take: the built-in ones, and the outside actions found.",
        discussion: """
            An outside action is an executable sharelane-NAME in the recipe's actions/ folder or on PATH, as git \
            finds its subcommands; a lane step `- NAME: {…}` runs it with the step's parameters as JSON on \
            standard input. Its one-line description is what `sharelane-NAME --describe` prints. See \
            Docs/Lanes.md.
            """)

    static let examples = ["sharelane actions", "sharelane actions Recipes/lanes-that-script.yaml"]

    @OptionGroup var recipeArgument: RecipeArgument
    var recipe: String? { recipeArgument.path }

    /// What each built-in step does, in a line.
    static let builtIn: [(String, String)] = [
        ("plan", "plan the recipe"), ("apply", "apply the recipe"), ("accept", "accept a share as a participant"),
        ("leave", "leave a share"), ("remove", "take a participant off a share, as its owner"),
        ("permission", "change a participant's permission, as the share's owner"), ("save", "save a record as a user"),
        ("delete", "delete a record as a user"),
        ("expect", "check access or contents, without changing anything (within: to wait)"),
        ("export", "write the live state as a recipe"), ("reset", "wipe a local store"),
        ("lane", "call another lane"), ("query", "query records as a user (within: to wait)"),
        ("deploy_schema", "deploy development's schema to production"),
        ("subscribe", "save a subscription and receive its notifications"),
        ("sh", "run a command on this machine (register: keeps its output)"),
    ]

    func run() async throws {
        let directory = recipe.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path } ?? "."
        var lines = ["Built in:"]
        let width = Self.builtIn.map(\.0.count).max() ?? 0
        for (name, what) in Self.builtIn {
            lines.append("  " + name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + what)
        }
        let found = OutsideActions.found(recipeDirectory: directory)
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
        Terminal.write(lines.joined(separator: "\n") + "\n")
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
