import Foundation
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
    ///
    /// Errors are printed here rather than by ArgumentParser so that every known secret is masked in them.
    public static func runFromCommandLine() async {
        do {
            var command = try parseAsRoot()
            if let logs = command as? any LoggingCommand {
                bootstrapLogging(logs.logging.level ?? type(of: logs).defaultLogLevel)
            }
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if !message.isEmpty {
                if code == .success { Terminal.write(message + "\n") } else { Terminal.printError(message) }
            }
            Foundation.exit(code.rawValue)
        }
    }
}
