import Foundation

/// A process a test started that listens on a loopback port and prints its address (`serve`, `record`), its
/// output in a log file.
public final class ListeningProcess: @unchecked Sendable {
    /// The address it printed, `http://127.0.0.1:PORT`.
    public let url: String
    /// The file its standard output and error go to.
    public let log: URL
    /// The process, for its identifier and the signals a test sends.
    public let process: Process
    /// The process's end, to await.
    public let exit: ProcessExit

    /// What it printed so far.
    public var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    private init(url: String, log: URL, process: Process, exit: ProcessExit) {
        self.url = url
        self.log = log
        self.process = process
        self.exit = exit
    }

    /// Starts `sharelane ARGUMENTS` and awaits the address it prints, holding no thread meanwhile.
    ///
    /// - Throws: when the process cannot start or prints no address within `TestDeadlines.serverStart` (then it
    ///   is stopped).
    public static func start(_ arguments: [String], log: URL, in directory: URL? = nil, what: String) async throws
        -> ListeningProcess
    {
        let (process, exit) = try launch(arguments, log: log, in: directory)
        _ = await exit.waitWhileRunning(within: TestDeadlines.serverStart) { address(in: log) != nil }
        guard let url = address(in: log) else {
            await SharelaneBinary.stop(process, exit)
            throw silent(what, log: log)
        }
        return ListeningProcess(url: url, log: log, process: process, exit: exit)
    }

    /// Sends `signal` (SIGTERM by default; SIGINT is Ctrl-C) unless it has ended, and awaits its end; SIGKILL
    /// if it outlives `TestDeadlines.afterSignal`.
    public func stop(signal: Int32 = SIGTERM) async {
        guard !exit.hasEnded else { return }
        kill(process.processIdentifier, signal)
        if await exit.status(within: TestDeadlines.afterSignal) == nil { await SharelaneBinary.stop(process, exit) }
    }

    /// `stop` for a synchronous caller (a `deinit`).
    public func stopBlocking(signal: Int32 = SIGTERM) {
        guard !exit.hasEnded else { return }
        kill(process.processIdentifier, signal)
        if exit.statusBlocking(within: TestDeadlines.afterSignal) == nil { SharelaneBinary.stopBlocking(process, exit) }
    }

    private static func launch(_ arguments: [String], log: URL, in directory: URL?) throws -> (Process, ProcessExit) {
        let started = try StartedProcess(SharelaneBinary.executable, arguments, in: directory, log: log)
        return (started.process, started.exit)
    }

    private static func address(in log: URL) -> String? {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression).map { String(text[$0]) }
    }

    private static func silent(_ what: String, log: URL) -> FixtureError {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return FixtureError(
            message: "\(what) printed no address within \(TestDeadlines.describe(TestDeadlines.serverStart)):\n\(text)")
    }
}
