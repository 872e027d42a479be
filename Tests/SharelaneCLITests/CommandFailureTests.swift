import ArgumentParser
import Foundation
import Testing

@testable import SharelaneCLI

/// The one mapping from a failure to the process's exit status: what a script or CI job branches on. The
/// documented codes (README, Docs/Plans.md): 0 success, 1 any error, a usage error too, 2 changes present,
/// 128 + N after signal N.
@Suite("Exit codes by kind of failure")
struct CommandFailureTests {
    /// Every kind, with the status a user sees. The mapping is a `switch` without `default`, so a new kind
    /// does not compile until it is given a code; this list says which code each has.
    static let everyKind: [(CommandFailure, Int32)] = [
        (.usage("--database is private, shared or public, not 'x'"), 1),
        (.input("cannot read the token file tokens.json: it is not a sharelane token file"), 1),
        (.store("cannot open the store 'sqlite:x': no such folder"), 1),
        (.conflict("cannot apply the saved plan p.plan: it was made for sqlite:a"), 1),
        (.interrupted(signal: SIGINT), 130),
        (.interrupted(signal: SIGTERM), 143),
        (.interrupted(signal: SIGHUP), 129),
    ]

    @Test("each kind of failure exits with its code: 1 for every error, 128 + N for signal N")
    func everyKindHasItsCode() {
        for (failure, status) in Self.everyKind {
            #expect(CommandFailure.exitCode(for: failure).rawValue == status, "\(failure.kind)")
            #expect(failure.kind.exitCode.rawValue == status, "\(failure.kind)")
        }
        let kinds = Self.everyKind.map(\.0.kind)
        for kind in [CommandFailure.Kind.usage, .input, .store, .conflict] {
            #expect(kinds.contains(kind), "\(kind) has no expected code here")
        }
    }

    @Test("the message printed is the failure's own, after `Error: `, and nothing for an interrupted command")
    func messagesUnchanged() {
        let failure = CommandFailure.conflict("the store lock on sqlite:s is held by process 42; try again")
        #expect(SharelaneCommand.fullMessage(for: failure) == "Error: " + failure.message)
        #expect("\(failure)" == failure.message)
        #expect(SharelaneCommand.fullMessage(for: CommandFailure.interrupted(signal: SIGINT)).isEmpty)
    }

    @Test("a mistyped option or a bad value is a usage error: exit 1, not ArgumentParser's 64")
    func parsingErrorsExitOne() throws {
        for arguments in [
            ["plan", "--no-such-option"], ["plan", "--parallelism", "many"], ["apply", "--target", "zzz nope"],
        ] {
            let error = try #require(throws: (any Error).self) { _ = try SharelaneCommand.parseAsRoot(arguments) }
            #expect(CommandFailure.exitCode(for: error) == .failure, "\(arguments)")
        }
        #expect(CommandFailure.exitCode(for: ValidationError("bad")) == .failure)
    }

    @Test("help exits 0, changes present exits 2, and any other error exits 1")
    func otherOutcomes() {
        #expect(CommandFailure.exitCode(for: CleanExit.helpRequest()) == .success)
        #expect(CommandFailure.exitCode(for: ExitCode.changesPresent).rawValue == 2)
        #expect(CommandFailure.exitCode(for: ExitCode.failure).rawValue == 1)
        #expect(CommandFailure.exitCode(for: CocoaError(.fileNoSuchFile)).rawValue == 1)
    }
}
