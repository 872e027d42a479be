import ArgumentParser

/// The `sharelane` command and its subcommands.
public struct SharelaneCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "sharelane",
        abstract: "Plan and apply CloudKit sharing from YAML recipes, and run lanes of sharing steps.",
        version: "0.1.0",
        subcommands: []
    )

    public init() {}
}
