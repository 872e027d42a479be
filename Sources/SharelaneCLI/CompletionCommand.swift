import ArgumentParser
import Foundation
import Recipe

/// `sharelane completion bash|zsh|fish`: prints a shell completion script (swift-argument-parser writes it).
struct CompletionCommand: ParsableCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "completion",
        abstract: "Print a completion script for bash, zsh or fish.",
        discussion: """
            The script completes commands, flags, lane names from the recipe, and --target addresses from \
            the recipe's declared zones, records, shares and participants.
            """)

    /// What `--help` ends with.
    static let examples = [
        "source <(sharelane completion bash)",
        "sharelane completion zsh > \"${fpath[1]}/_sharelane\"",
        "sharelane completion fish > ~/.config/fish/completions/sharelane.fish",
    ]

    @Argument(help: "The shell: bash, zsh or fish.")
    var shell: Shell

    enum Shell: String, ExpressibleByArgument, CaseIterable {
        case bash, zsh, fish
        var completionShell: CompletionShell {
            switch self {
            case .bash: .bash
            case .zsh: .zsh
            case .fish: .fish
            }
        }
    }

    func run() throws {
        Terminal.write(SharelaneCommand.completionScript(for: shell.completionShell))
    }
}

/// Completions read from the recipe on the command line being completed (or the default one).
enum RecipeCompletion {
    /// The recipe a command line names: its first `.yaml`/`.yml` word after the command, else the default.
    static func recipe(in words: [String]) -> Recipe? {
        let named = words.dropFirst(2).first { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
        guard
            let path = named
                ?? RecipeSelection.defaultPaths.first(where: { FileManager.default.fileExists(atPath: $0) })
        else { return nil }
        return try? RecipeLoader(overrides: [:]).load(path: path)
    }

    /// The lanes of that recipe, private ones left out.
    static let lanes = CompletionKind.custom { words, _, _ in
        recipe(in: words)?.lanes.filter { !$0.isPrivate }.map(\.name) ?? []
    }
}
