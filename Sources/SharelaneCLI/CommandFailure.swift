import ArgumentParser

/// Why a command failed, by kind, with the message the user reads (no stack trace): what failed, where, and
/// what to do next.
///
/// This file is the one place where an outcome becomes the process's exit status (Docs/Architecture.md):
/// 0 success, 1 an error of any kind, 2 changes present (`--detailed-exitcode`), 128 + N when signal N
/// stopped the command (130 for Ctrl-C), as shells and Terraform report it. (`serve -- COMMAND` exits with its
/// command's status, which is that command's to choose.)
struct CommandFailure: Error, CustomStringConvertible, Equatable {
    /// What went wrong, as a script or a test tells failures apart.
    enum Kind: Equatable, Sendable {
        /// The command line itself: a missing or contradictory option, a value of the wrong form.
        case usage
        /// A file the command reads or writes: a recipe, a saved plan, a report, a token or snapshot file.
        case input
        /// The store: it cannot be opened, reached, signed in to, or it refused what was asked.
        case store
        /// Something else holds or changed what the command needs: a lock, a port, a file it would replace,
        /// a store changed since its saved plan.
        case conflict
        /// A signal (Ctrl-C, SIGTERM) asked the command to stop, and it stopped.
        case interrupted(signal: Int32)

        /// The exit status of a failure of this kind.
        var exitCode: ExitCode {
            switch self {
            // A usage error exits 1 as every other error does (the docs promise 0, 1 and 2 only);
            // ArgumentParser's own code for it would be 64 (EX_USAGE).
            case .usage, .input, .store, .conflict: .failure
            case .interrupted(let signal): ExitCode(128 + signal)
            }
        }
    }

    var kind: Kind
    /// What the user reads after `Error: `; empty for an interrupted command, which said what it stopped.
    var message: String

    var description: String { message }

    static func usage(_ message: String) -> CommandFailure { CommandFailure(kind: .usage, message: message) }
    static func input(_ message: String) -> CommandFailure { CommandFailure(kind: .input, message: message) }
    static func store(_ message: String) -> CommandFailure { CommandFailure(kind: .store, message: message) }
    static func conflict(_ message: String) -> CommandFailure { CommandFailure(kind: .conflict, message: message) }

    /// A command that `signal` asked to stop and that stopped, having said what it did and did not do.
    static func interrupted(signal: Int32) -> CommandFailure {
        CommandFailure(kind: .interrupted(signal: signal), message: "")
    }

    /// The status the process exits with after `error`, whatever threw it: a `CommandFailure` by its kind,
    /// an `ExitCode` as thrown, and ArgumentParser's parsing and validation errors as usage errors.
    static func exitCode(for error: any Error) -> ExitCode {
        if let failure = error as? CommandFailure { return failure.kind.exitCode }
        let code = SharelaneCommand.exitCode(for: error)
        return code == .validationFailure ? Kind.usage.exitCode : code
    }
}

extension ExitCode {
    /// `plan --detailed-exitcode` and `schema diff --detailed-exitcode` when there are changes.
    static let changesPresent = ExitCode(2)
}
