import ChildProcesses
import Foundation
import ShareKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// How sharelane answers SIGINT (Ctrl-C) and SIGTERM, as Terraform does (Docs/Plans.md, "Stopping an apply").
///
/// While an apply, a destroy or a lane writes (`whileWriting`), the first signal asks it to stop
/// (`StopRequest`): the calls under way finish, nothing new starts, and the command reports what was and was
/// not applied, then exits 128 + the signal's number (130 for Ctrl-C). A second signal ends the process at
/// once, saying the store may be partly changed. Any other time (a plan, a read-only command, the question
/// before an apply) the first signal ends the process at once, with the same status.
///
/// The signals are caught by a handler that writes their number to a pipe, read by a thread of its own: the
/// handler does nothing else, as a handler may, and a handler (unlike an ignored signal) is not inherited
/// by the commands a lane or an outside action runs, whose own Ctrl-C stays theirs.
enum Interruptions {
    /// What the command is doing now.
    private enum Phase {
        /// A first signal ends the process.
        case atOnce
        /// A first signal asks `request` to stop; `stopping` is set once it has.
        case writing(StopRequest, what: String, store: String, stopping: Bool)
        /// Every signal is handed on, to the command `serve` wraps.
        case forwarding(@Sendable (Int32) -> Void)
    }

    /// What the commands' tasks and the signals' thread share (never the handler, which takes no lock).
    private struct State {
        var phase = Phase.atOnce
        var installed = false
        /// What a first signal that ends the process at once removes and says (`endingAtOnce`).
        var atOnceEnding: (line: String?, files: [String])?
    }
    /// The state behind a lock in an object of its own, not a `Mutex` in a static: in the optimised build a
    /// signal taken during a plan read that `Mutex`'s state back as `.stop` with no request, and crashed
    /// (SIGSEGV, exit 139, where a debug build exits 130).
    private final class SharedState: @unchecked Sendable {
        private let lock = NSLock()
        private var state = State()

        func withLock<Result>(_ body: (inout State) -> Result) -> Result {
            lock.lock()
            defer { lock.unlock() }
            return body(&state)
        }
    }
    private static let state = SharedState()
    /// The signal that asked the command to stop, 0 while none has: an atomic of its own, apart from the
    /// state's enum and closures (a release build, the state then in a static `Mutex`, read an optional signal
    /// there as `0` when no signal had come, and every apply exited 128).
    private static let lastSignal = Atomic<Int32>(0)

    /// Installs the handlers of SIGINT and SIGTERM (and of `more`) for the whole process: the pipe and its
    /// thread once, a handler for each signal asked for (a command may ask for more, as `run` does SIGHUP).
    static func install(also more: [Int32] = []) {
        let first: Bool = state.withLock { state in
            defer { state.installed = true }
            return !state.installed
        }
        guard first else {
            for signalNumber in more { handle(signalNumber) }
            return
        }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        // A flood of signals fills the pipe: the handler's write must then fail, never block (a handler that
        // blocks stops the thread it interrupted for good).
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        signalPipe = ends[1]
        let reading = ends[0]
        let thread = Thread {
            var byte: UInt8 = 0
            while true {
                let count = read(reading, &byte, 1)
                if count == 1 {
                    received(Int32(byte))
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
        thread.name = "sharelane-signals"
        thread.start()
        for signalNumber in [SIGINT, SIGTERM] + more { handle(signalNumber) }
    }

    private static func handle(_ signalNumber: Int32) {
        var action = sigaction()
        #if canImport(Darwin)
            action.__sigaction_u.__sa_handler = writeSignalNumber
        #else
            action.__sigaction_handler.sa_handler = writeSignalNumber
        #endif
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(signalNumber, &action, nil)
    }

    /// Runs `body`, an apply, a destroy or a lane writing to `store`, with the first signal asking it to stop
    /// rather than ending the process. `what` names it in the lines a signal prints ("apply").
    static func whileWriting<Value>(
        _ what: String, store: String, _ body: () async throws -> Value
    ) async rethrows -> Value {
        let request = StopRequest()
        state.withLock { $0.phase = .writing(request, what: what, store: store, stopping: false) }
        // Once asked to stop, a later signal (while the report is written) still says what it leaves.
        defer {
            state.withLock { state in
                if case .writing(_, _, _, stopping: false) = state.phase { state.phase = .atOnce }
            }
        }
        return try await StopRequest.$current.withValue(request) { try await body() }
    }

    /// Runs `body` with every signal handed to `forward` rather than ending the process: `serve -- CMD`, whose
    /// command decides how a signal ends it.
    static func whileForwarding<Value>(
        to forward: @escaping @Sendable (Int32) -> Void, _ body: () async throws -> Value
    ) async rethrows -> Value {
        state.withLock { $0.phase = .forwarding(forward) }
        defer { state.withLock { $0.phase = .atOnce } }
        return try await body()
    }

    /// Runs `body` with a first signal, which ends the process at once, first removing `files` (a file being
    /// written under a temporary name) and then saying `line` (that nothing was changed).
    static func endingAtOnce<Value>(
        saying line: String?, removing files: [String] = [], _ body: () async throws -> Value
    ) async rethrows -> Value {
        let previous = state.withLock { state in
            defer { state.atOnceEnding = (line, files) }
            return state.atOnceEnding
        }
        defer { state.withLock { $0.atOnceEnding = previous } }
        return try await body()
    }

    /// The signal that asked the command to stop, or nil when none did.
    static var stoppedBySignal: Int32? {
        let signal = lastSignal.load(ordering: .acquiring)
        return signal == 0 ? nil : signal
    }

    /// What a signal does, on the signals' thread.
    private static func received(_ signalNumber: Int32) {
        enum Action {
            case endAtOnce(String?, removing: [String] = [])
            case stop(StopRequest, what: String)
            case forward(@Sendable (Int32) -> Void)
        }
        lastSignal.store(signalNumber, ordering: .releasing)
        let action: Action = state.withLock { state in
            switch state.phase {
            case .atOnce:
                return .endAtOnce(state.atOnceEnding?.line, removing: state.atOnceEnding?.files ?? [])
            case .forwarding(let forward):
                return .forward(forward)
            case .writing(let request, let what, let store, let stopping):
                if stopping {
                    return .endAtOnce(
                        "Stopped at once: \(store) may be partly changed. Run the same `sharelane \(what)` again: it "
                            + "plans only what is left, and converges.")
                }
                state.phase = .writing(request, what: what, store: store, stopping: true)
                return .stop(request, what: what)
            }
        }
        switch action {
        case .endAtOnce(let line, let files):
            for file in files { unlink(file) }
            if let line { Terminal.printError("\n" + line) }
            // The programs a lane step runs are in groups of their own, which the terminal's Ctrl-C does not
            // reach: they are told, as they would have been.
            ChildProcess.signalEveryone(signalNumber)
            _exit(CommandFailure.interrupted(signal: signalNumber).kind.exitCode.rawValue)
        case .forward(let forward):
            forward(signalNumber)
        case .stop(let request, let what):
            // The programs a lane's step runs are stopped with the signal that came, as it came.
            ChildProcess.stopSignal = signalNumber
            let calls = request.request()
            let underWay =
                switch calls {
                case 0 where what.hasPrefix("run "): "letting the step under way finish"
                case 0: "no request is in flight"
                case 1: "letting the 1 request in flight finish"
                default: "letting the \(calls) requests in flight finish"
                }
            Terminal.printError("\nStopping: \(underWay); nothing new starts (Ctrl-C again to stop at once)")
        }
    }
}

/// The write end of the signals' pipe, for the handler (which may touch nothing but it). A plain global, not
/// in the locked state: a signal handler may call only async-signal-safe functions, and taking a lock is not one (the
/// handler could interrupt the lock's holder on its own thread and wait for ever). It is set once, before any
/// handler is installed, and only read after.
nonisolated(unsafe) private var signalPipe: Int32 = -1

/// The handler of SIGINT and SIGTERM: writes the signal's number to the pipe and returns.
private func writeSignalNumber(_ signalNumber: Int32) {
    var byte = UInt8(truncatingIfNeeded: signalNumber)
    let saved = errno
    _ = write(signalPipe, &byte, 1)
    errno = saved
}
