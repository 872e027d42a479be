import ArgumentParser

/// The `sharelane` command and its subcommands.
public struct SharelaneCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "sharelane",
        abstract: "Plan and apply CloudKit sharing from YAML recipes, and run lanes of sharing steps.",
        version: "0.1.0",
        subcommands: [
            ValidateCommand.self, PlanCommand.self, ApplyCommand.self, RunCommand.self, LanesCommand.self,
            ExportCommand.self, ShowCommand.self, ServeCommand.self,
        ]
    )

    public init() {}

    /// Parses the command line and runs the command; `main.swift` calls this. (A top-level
    /// `await SharelaneCommand.main()` picks ArgumentParser's synchronous `main()`, which refuses to run an
    /// async command; inside an async function the async overload is chosen.)
    public static func runFromCommandLine() async {
        await main()
    }
}
