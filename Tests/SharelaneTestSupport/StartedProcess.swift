import Foundation

/// A process a test started and goes on with while it runs (to signal it, or to see what it does), its
/// standard output and error in one log file and its end something to await.
public final class StartedProcess: @unchecked Sendable {
    /// The process, for what Foundation tells of it.
    public let process: Process
    /// Its end, to await.
    public let exit: ProcessExit
    /// The file its standard output and error go to.
    public let log: URL

    /// Its process identifier, for signals.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// What it printed so far.
    public var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Whether it has ended.
    public var hasEnded: Bool { exit.hasEnded }

    /// Starts the built `sharelane ARGUMENTS`, as `init(_:_:in:environment:log:errors:)` starts any program.
    ///
    /// - Throws: when the process cannot start.
    public convenience init(
        _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil, log: URL,
        errors: URL? = nil
    ) throws {
        try self.init(
            SharelaneBinary.executable, arguments, in: directory, environment: environment, log: log, errors: errors)
    }

    /// Starts `executable ARGUMENTS` with standard input closed, appending what it prints to `log`.
    ///
    /// - Parameters:
    ///   - environment: the whole environment; nil keeps this process's.
    ///   - errors: a file of its own for standard error; nil puts it in `log` too.
    /// - Throws: when the process cannot start.
    public init(
        _ executable: URL, _ arguments: [String], in directory: URL? = nil,
        environment: [String: String]? = nil, log: URL, errors: URL? = nil
    ) throws {
        let handle = try Self.appending(to: log)
        process = Process()
        exit = ProcessExit(process)
        self.log = log
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if let environment { process.environment = environment }
        process.standardOutput = handle
        process.standardError = try errors.map(Self.appending(to:)) ?? handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    private static func appending(to file: URL) throws -> FileHandle {
        if !FileManager.default.fileExists(atPath: file.path) {
            _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: file)
        handle.seekToEndOfFile()
        return handle
    }

    /// Waits while it runs until `condition` holds, up to `limit` (`TestDeadlines.event` by default).
    ///
    /// - Returns: whether the condition held.
    public func waitUntil(within limit: Duration = TestDeadlines.event, _ condition: () -> Bool) async -> Bool {
        await exit.waitWhileRunning(within: limit, until: condition)
    }

    /// Runs `action` on a thread of its own as soon as `condition` holds while the process runs (checked every
    /// 50 ms, waking when it ends): what the action does (a signal) reaches the process while it is still where
    /// the condition says, however long a busy machine keeps this test's task from running.
    ///
    /// - Returns: what `action` returned, or nil when the process ended or `TestDeadlines.event` passed first.
    public func once<T: Sendable>(
        _ condition: @escaping @Sendable () -> Bool, then action: @escaping @Sendable () -> T
    ) async -> T? {
        let exit = self.exit
        let outcome = try? await SharelaneBinary.offPool { () -> T? in
            guard exit.waitWhileRunningBlocking(within: TestDeadlines.event, until: condition), !exit.hasEnded
            else { return nil }
            return action()
        }
        return outcome ?? nil
    }

    /// Awaits its end, up to `limit`.
    ///
    /// - Returns: its termination status, or nil when it still runs.
    public func status(within limit: Duration) async -> Int32? { await exit.status(within: limit) }

    /// Awaits its end after a signal a test sent; if it outlives `TestDeadlines.afterSignal` it is killed and
    /// `what` thrown.
    ///
    /// - Returns: its termination status.
    /// - Throws: `FixtureError` with `what` and the deadline when it did not end.
    public func statusAfterSignal(_ what: String) async throws -> Int32 {
        if let status = await exit.status(within: TestDeadlines.afterSignal) { return status }
        kill(process.processIdentifier, SIGKILL)
        _ = await exit.status(within: TestDeadlines.afterSignal)
        throw FixtureError(message: "\(what) \(TestDeadlines.describe(TestDeadlines.afterSignal)) after the signal")
    }

    /// Sends `signal` (SIGTERM by default; SIGINT is Ctrl-C) unless it has ended, and waits for its end,
    /// killing it if it outlives `TestDeadlines.afterSignal`; blocks the calling thread, for a `defer`.
    public func stopBlocking(signal: Int32 = SIGTERM) {
        guard !exit.hasEnded else { return }
        kill(process.processIdentifier, signal)
        if exit.statusBlocking(within: TestDeadlines.afterSignal) == nil { killBlocking() }
    }

    /// Kills it (SIGKILL) unless it has ended, and waits for its end; blocks the calling thread, for a `defer`
    /// or a `deinit`.
    public func killBlocking() {
        guard !exit.hasEnded else { return }
        kill(process.processIdentifier, SIGKILL)
        _ = exit.statusBlocking(within: TestDeadlines.afterSignal)
    }
}
