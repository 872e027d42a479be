import ArgumentParser
import Logging

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// `--log-level`, taken by every command: how much the libraries' logs say on standard error.
struct LoggingOptions: ParsableArguments {
    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp(
            "trace, debug, info, notice, warning, error or critical.",
            discussion: "Log lines go to standard error, secrets masked; the default is the command's own.",
            valueName: "level"))
    var level: Logger.Level?
}

/// A command whose logs `--log-level` sets; the command line bootstraps logging once, before it runs.
protocol LoggingCommand {
    var logging: LoggingOptions { get }
    /// The level when `--log-level` is not given.
    static var defaultLogLevel: Logger.Level { get }
    /// The level when `--log-level` is not given, as the command's other options choose it.
    var chosenDefaultLogLevel: Logger.Level { get }
}

extension LoggingCommand {
    static var defaultLogLevel: Logger.Level { .info }
    var chosenDefaultLogLevel: Logger.Level { Self.defaultLogLevel }
}

extension SharelaneCommand {
    /// Sends every logger of the process to standard error at `level`, secrets masked. Called once.
    static func bootstrapLogging(_ level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler = MaskingLogHandler(base: StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
    }
}
