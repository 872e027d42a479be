import Foundation
import Subprocess
import Synchronization

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A program sharelane starts: a command `serve` wraps, a lane's `sh:` step, an outside action, git, dot.
///
/// Every one starts as a shell would start it, whatever thread of this process starts it: with no signal
/// blocked and every signal at its default (swift-subprocess resets both in the child; a thread of Swift's
/// concurrency may have any mask, and an ignored signal would be inherited), so a shell's `wait` and its own
/// traps work. A long-running one (`ownGroup`) runs in a process group of its own: a stop — a timeout, a
/// forwarded Ctrl-C, SIGTERM or SIGHUP, passed on as it came — reaches everything it started, and the group
/// is killed when it has not ended a grace period later. Its group is led by a `ProcessGroupGuard`, which
/// ends the group when sharelane is killed outright and starts the program with glibc's reserved signals
/// at their default too.
///
/// The program is the first argument: a path when it holds a `/`, otherwise found on the `PATH` of the
/// environment it is given, and executed directly (never through a shell or `env`).
public final class ChildProcess: Sendable {
    /// What a finished program left.
    public struct Finished: Sendable {
        /// Its exit status, or 128 + N when signal N ended it (as a shell reports it).
        public var status: Int32
        /// The signal that ended it, if one did.
        public var signal: Int32?
        /// What it wrote, when its output was collected.
        public var standardOutput: Data
        public var standardError: Data
        /// The first signal `stop` sent it, if any: a timeout's or a forwarded one.
        public var stoppedWith: Int32?
        /// Whether the timeout given to `run` stopped it.
        public var timedOut: Bool
    }

    /// Why a program could not be started.
    public struct LaunchFailure: Error, CustomStringConvertible {
        /// The program as it was named.
        public var program: String
        /// Whether no program of that name was found: a shell answers that with status 127.
        public var notFound: Bool
        public var reason: String

        public var description: String {
            notFound
                ? (program.contains("/")
                    ? "\(program) does not exist or is not executable"
                    : "no program named \(program) on PATH")
                : "cannot run \(program): \(reason)"
        }
    }

    /// Where the program's standard input comes from.
    public enum Input: Sendable {
        /// An empty input (it reads end of file at once).
        case nothing
        /// These bytes, then end of file.
        case data(Data)
        /// This process's own standard input, unless that is a terminal: a process of a group of its own that
        /// reads the terminal would be stopped (SIGTTIN), so it then reads nothing.
        case inheritedUnlessTerminal
    }

    /// What becomes of what the program writes.
    public enum Output: Sendable {
        /// Written where this process writes (a terminal keeps its colours).
        case inherited
        /// Kept in `Finished`, and handed to `received` as it comes (`isError` for standard error).
        case collected(received: (@Sendable (_ bytes: Data, _ isError: Bool) -> Void)?)
    }

    public let arguments: [String]
    public let environment: [String: String]
    public let directory: String?
    public let ownGroup: Bool
    public let grace: Duration

    /// The program's life as `run`, `stop` and the timer see it, from any thread.
    private struct Life {
        var pid: pid_t?
        var ended = false
        var firstStop: Int32?
        var timedOut = false
        var killer: Task<Void, Never>?
    }
    private let life = Mutex(Life())

    /// - Parameters:
    ///   - arguments: the program, then its arguments.
    ///   - environment: its whole environment (default: this process's).
    ///   - directory: where it runs (default: here).
    ///   - ownGroup: whether it runs in a process group of its own, stopped as a whole.
    ///   - grace: how long a stopped program has to end before its group is killed.
    public init(
        _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil, ownGroup: Bool = true,
        grace: Duration = .seconds(10)
    ) {
        self.arguments = arguments
        self.environment = environment ?? ProcessInfo.processInfo.environment
        self.directory = directory
        self.ownGroup = ownGroup
        self.grace = grace
    }

    /// Runs the program to its end.
    /// - Parameter timeout: stops it (SIGTERM, then the grace period) when it runs longer.
    /// - Throws: `LaunchFailure` when it cannot be started.
    public func run(input: Input = .nothing, output: Output, timeout: Duration? = nil) async throws -> Finished {
        guard let program = arguments.first, !program.isEmpty else {
            throw LaunchFailure(program: "", notFound: true, reason: "nothing to run")
        }
        // Stopped before it started (a signal while its caller got ready): it never starts.
        if let early = life.withLock({ $0.firstStop }) {
            finish()
            return Finished(
                status: 128 + early, signal: early, standardOutput: Data(), standardError: Data(), stoppedWith: early,
                timedOut: false)
        }
        // A group of its own is led by a guard that ends it if sharelane dies first (`ProcessGroupGuard`).
        let launched: [String]
        do {
            launched =
                try ownGroup
                ? ProcessGroupGuard.guarded(arguments, environment: environment, directory: directory, grace: grace)
                    ?? arguments : arguments
        } catch {
            finish()
            throw error
        }
        let executable: Executable = launched[0].contains("/") ? .path(FilePath(launched[0])) : .name(launched[0])
        let childEnvironment = Environment.custom(
            Dictionary(
                uniqueKeysWithValues: environment.map { (Environment.Key(stringLiteral: $0.key), $0.value) }))
        var options = PlatformOptions()
        if ownGroup { options.processGroupID = 0 }
        let workingDirectory = directory.map { FilePath($0) }
        let timer = timeout.map { limit in
            Task { [weak self] in
                guard (try? await Task.sleep(for: limit)) != nil, let self else { return }
                self.life.withLock { life in if !life.ended { life.timedOut = true } }
                self.stop(SIGTERM)
            }
        }
        defer { timer?.cancel() }
        let collected = Collected()
        let status: TerminationStatus
        do {
            switch output {
            case .inherited:
                let standardInput: FileDescriptorInput
                switch input {
                case .inheritedUnlessTerminal where isatty(0) == 0:
                    standardInput = .currentStandardInput
                default:
                    standardInput = .fileDescriptor(
                        try FileDescriptor.open("/dev/null", .readOnly), closeAfterSpawningProcess: true)
                }
                if case .data = input {
                    preconditionFailure("a program with inherited output takes no input of bytes")
                }
                let result = try await Subprocess.run(
                    executable, arguments: Arguments(Array(launched.dropFirst())), environment: childEnvironment,
                    workingDirectory: workingDirectory, platformOptions: options, input: standardInput,
                    output: .currentStandardOutput, error: .currentStandardError
                ) { execution in
                    self.started(execution.processIdentifier.value)
                }
                status = result.terminationStatus
            case .collected(let received):
                let bytes: Data? = if case .data(let data) = input { data } else { nil }
                let result = try await Subprocess.run(
                    executable, arguments: Arguments(Array(launched.dropFirst())), environment: childEnvironment,
                    workingDirectory: workingDirectory, platformOptions: options, input: .inputWriter,
                    output: .sequence, error: .sequence
                ) { execution in
                    self.started(execution.processIdentifier.value)
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            // A program that ends without reading its input is not a failure of ours.
                            if let bytes, !bytes.isEmpty {
                                _ = try? await execution.standardInputWriter.write(Array(bytes))
                            }
                            try? await execution.standardInputWriter.finish()
                        }
                        group.addTask {
                            for try await buffer in execution.standardOutput {
                                let data = buffer.withUnsafeBytes { Data($0) }
                                collected.append(data, isError: false)
                                received?(data, false)
                            }
                        }
                        group.addTask {
                            for try await buffer in execution.standardError {
                                let data = buffer.withUnsafeBytes { Data($0) }
                                collected.append(data, isError: true)
                                received?(data, true)
                            }
                        }
                        try await group.waitForAll()
                    }
                }
                status = result.terminationStatus
            }
        } catch let error as SubprocessError {
            finish()
            throw LaunchFailure(
                program: program, notFound: error.code == .executableNotFound, reason: "\(error)")
        } catch {
            finish()
            throw LaunchFailure(program: program, notFound: false, reason: "\(error)")
        }
        let (stoppedWith, timedOut) = finish()
        var finished = Finished(
            status: 0, signal: nil, standardOutput: collected.output, standardError: collected.error,
            stoppedWith: stoppedWith, timedOut: timedOut)
        switch status {
        case .exited(let code):
            finished.status = Int32(truncatingIfNeeded: code)
        case .signaled(let signal):
            finished.signal = Int32(truncatingIfNeeded: signal)
            finished.status = 128 + Int32(truncatingIfNeeded: signal)
        }
        return finished
    }

    /// Sends `signal` to the program (to its whole group when it has one of its own), and kills the group when
    /// it has not ended within the grace period of the first stop. Does nothing once it has ended.
    public func stop(_ signal: Int32) {
        let target: pid_t? = life.withLock { life in
            guard !life.ended else { return nil }
            if life.firstStop == nil {
                life.firstStop = signal
                life.killer = Task { [weak self, grace] in
                    guard (try? await Task.sleep(for: grace)) != nil else { return }
                    self?.kill(SIGKILL)
                }
            }
            return life.pid
        }
        guard let target else { return }
        _ = sendSignal(ownGroup ? -target : target, signal)
    }

    /// The signal that asked this process to stop, which a stop of its programs passes on as it came: a
    /// step that traps SIGTERM to clean up gets SIGTERM, not SIGINT. SIGINT until a signal came.
    public static var stopSignal: Int32 {
        get { receivedStopSignal.withLock { $0 } }
        set { receivedStopSignal.withLock { $0 = newValue } }
    }
    private static let receivedStopSignal = Mutex(SIGINT)

    /// Sends `signal` to every program still running that sharelane started, for a process about to end at
    /// once (a second Ctrl-C): nothing it started outlives it by its doing.
    public static func signalEveryone(_ signal: Int32) {
        for (pid, group) in Running.shared.all() { _ = sendSignal(group ? -pid : pid, signal) }
    }

    // MARK: - Private

    private func started(_ pid: pid_t) {
        let stopEarly: Int32? = life.withLock { life in
            life.pid = pid
            return life.firstStop
        }
        Running.shared.add(pid, group: ownGroup)
        // A stop asked for before the program was known (a signal during its start) still reaches it.
        if let stopEarly { _ = sendSignal(ownGroup ? -pid : pid, stopEarly) }
    }

    private func kill(_ signal: Int32) {
        let target: pid_t? = life.withLock { $0.ended ? nil : $0.pid }
        if let target { _ = sendSignal(ownGroup ? -target : target, signal) }
    }

    @discardableResult
    private func finish() -> (stoppedWith: Int32?, timedOut: Bool) {
        let (pid, stopped, timedOut, killer): (pid_t?, Int32?, Bool, Task<Void, Never>?) = life.withLock { life in
            life.ended = true
            return (life.pid, life.firstStop, life.timedOut, life.killer)
        }
        killer?.cancel()
        if let pid {
            Running.shared.remove(pid)
            // What a stopped program left behind in its group (a shell's background jobs) goes with it.
            if ownGroup, stopped != nil { _ = sendSignal(-pid, SIGKILL) }
        }
        return (stopped, timedOut)
    }
}

/// The output of a program, as it comes.
private final class Collected: Sendable {
    private let data = Mutex((out: Data(), err: Data()))

    func append(_ bytes: Data, isError: Bool) {
        data.withLock { data in
            if isError { data.err.append(bytes) } else { data.out.append(bytes) }
        }
    }

    var output: Data { data.withLock { $0.out } }
    var error: Data { data.withLock { $0.err } }
}

/// The programs running now, for `ChildProcess.signalEveryone`.
private final class Running: Sendable {
    static let shared = Running()
    private let processes = Mutex<[pid_t: Bool]>([:])

    func add(_ pid: pid_t, group: Bool) { processes.withLock { $0[pid] = group } }
    func remove(_ pid: pid_t) { _ = processes.withLock { $0.removeValue(forKey: pid) } }
    func all() -> [(pid_t, Bool)] { processes.withLock { $0.map { ($0.key, $0.value) } } }
}

/// `kill(2)`, named apart from `ChildProcess.kill(_:)`.
private func sendSignal(_ pid: pid_t, _ signal: Int32) -> Int32 {
    #if canImport(Glibc)
        Glibc.kill(pid, signal)
    #elseif canImport(Musl)
        Musl.kill(pid, signal)
    #else
        Darwin.kill(pid, signal)
    #endif
}
