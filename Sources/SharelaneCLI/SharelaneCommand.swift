import ArgumentParser
import ChildProcesses
import Foundation
import Recipe

/// The `sharelane` command and its subcommands.
public struct SharelaneCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "sharelane",
        abstract: "Plan and apply CloudKit sharing from YAML recipes, and run lanes of sharing steps.",
        version: SharelaneVersion.current,
        subcommands: [
            InitCommand.self, ValidateCommand.self, PlanCommand.self, ApplyCommand.self, DestroyCommand.self,
            RunCommand.self, TestCommand.self, LanesCommand.self, ActionsCommand.self, ExportCommand.self,
            ShowCommand.self,
            AccessCommand.self, GraphCommand.self,
            SchemaCommand.self, QueryCommand.self, ServeCommand.self, RecordCommand.self, ReplayCommand.self,
            ConformanceCommand.self, CompletionCommand.self, LoginCommand.self, LogoutCommand.self,
        ]
    )

    public init() {}

    /// What the process sets before anything else runs, before the first thread of Swift's concurrency starts
    /// (`main.swift` calls it first): how its memory grows (`ProcessMemory`), and no signal blocked.
    ///
    /// A process inherits the signal mask of the thread that started it, and a test runner or a thread pool
    /// may start sharelane with SIGTERM and SIGINT blocked: a cancelled CI job's SIGTERM would then never
    /// reach it. Every thread made later inherits this one's empty mask. (An ignored signal stays ignored, as
    /// POSIX shells expect of a background job's Ctrl-C.)
    public static func prepareProcess() {
        // Started again as the guard of a program's process group, it is that and nothing else.
        ProcessGroupGuard.takeOverIfAsked()
        ProcessMemory.growInLargeSteps()
        var none = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, nil)
    }

    /// Parses the command line and runs the command; `main.swift` calls this. (A top-level
    /// `await SharelaneCommand.main()` picks ArgumentParser's synchronous `main()`, which refuses to run an
    /// async command; inside an async function the async overload is chosen.)
    ///
    /// Errors are printed here rather than by ArgumentParser so that every known secret is masked in them.
    public static func runFromCommandLine() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let message = unknownCommandMessage(arguments) {
            Terminal.printError(message)
            Foundation.exit(ExitCode.failure.rawValue)
        }
        do {
            var command = try parseAsRoot(arguments)
            // serve and record stop on a signal by their own service lifecycle (serve forwards them to the command it runs).
            if !(command is ServeCommand), !(command is RecordCommand) { Interruptions.install() }
            if let logs = command as? any LoggingCommand {
                bootstrapLogging(logs.logging.level ?? logs.chosenDefaultLogLevel)
            }
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            // The newest web auth tokens of stores opened with a saved sign-in (`sharelane login`).
            await TokenKeeper.flush()
        } catch {
            await TokenKeeper.flush()
            let code = CommandFailure.exitCode(for: error)
            var message = fullMessage(for: error)
            if code == .success, message.hasPrefix("OVERVIEW:") || message.hasPrefix("USAGE:"),
                let examples = examples(helpingWith: arguments)
            {
                while message.hasSuffix("\n") { message.removeLast() }
                message += "\n\nEXAMPLES:\n" + examples.map { "  " + $0 }.joined(separator: "\n")
            }
            if !message.isEmpty {
                if code == .success { Terminal.write(message + "\n") } else { Terminal.printError(message) }
            }
            Foundation.exit(code.rawValue)
        }
    }

    /// The names a first argument may take: the subcommands and `help`.
    static var commandNames: [String] {
        configuration.subcommands.compactMap { $0.configuration.commandName } + ["help"]
    }

    /// The error for a first argument that names no command (`sharelane plna`), with the closest command, or
    /// nil when the first argument is a command, an option, or missing.
    static func unknownCommandMessage(_ arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-"), !commandNames.contains(first) else { return nil }
        let hint = Suggestion.closest(to: first, in: commandNames).map { "; did you mean '\($0)'?" } ?? ""
        return """
            Error: unknown command '\(first)'\(hint)
            Usage: sharelane <command>, one of: \(commandNames.dropLast().joined(separator: ", "))
              See 'sharelane --help' for more information.
            """
    }

    /// The examples a command's help ends with, for `sharelane COMMAND --help` and `sharelane help COMMAND`.
    static func examples(helpingWith arguments: [String]) -> [String]? {
        let words = arguments.filter { !$0.hasPrefix("-") && $0 != "help" }
        guard let name = words.first,
            let command = configuration.subcommands.first(where: { $0.configuration.commandName == name })
        else { return nil }
        return (command as? any CommandExamples.Type)?.examples
    }
}

/// A command whose `--help` ends with examples (ArgumentParser prints a discussion before the options).
protocol CommandExamples {
    static var examples: [String] { get }
}
