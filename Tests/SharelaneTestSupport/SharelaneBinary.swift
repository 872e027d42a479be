import Foundation

/// Runs the built `sharelane` binary as a user would from a shell: a real process, standard input that is
/// not a terminal, and what it printed on each stream.
public enum SharelaneBinary {
    /// What one run printed and how it exited.
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public var output: String { stdout + stderr }

        public init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
    }

    /// The executable built beside the tests.
    public static var executable: URL { BuiltProducts.sharelane }

    /// Runs `sharelane ARGUMENTS` in `directory` (the package root by default), holding none of the shared
    /// pool's threads while the command runs (there is no blocking form: a test that waits on a process with a
    /// thread of Swift Testing's small pool stalls every other test). `SHARELANE_STORE` is unset unless
    /// `environment` sets it, so only `--store` or the default chooses the store.
    ///
    /// - Throws: when the binary is not built or the process cannot start.
    public static func run(
        _ arguments: [String], in directory: URL = BuiltProducts.packageRoot, environment extra: [String: String] = [:]
    ) async throws -> Result {
        let merged = try environment(extra)
        return try await runProcess(executable, arguments, in: directory, environment: merged)
    }

    /// Runs blocking work on a thread of its own and hands back what it made: for a test that must call
    /// something synchronous that waits (the async `runProcess` and `ProcessExit` need no such thread).
    public static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Swift.Result { try work() }) }
            thread.start()
        }
    }

    /// Runs any executable with standard input closed and its output caught in files (not pipes: a process
    /// that writes more than a pipe holds would block until it is read), and awaits its end.
    ///
    /// - Parameter deadline: stop the process and throw when it runs longer; a bound on a hang, never a
    ///   measure of speed.
    /// - Throws: when the process cannot start, or outlives `deadline`.
    public static func runProcess(
        _ executable: URL, _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil,
        deadline: Duration = TestDeadlines.processEnd
    ) async throws -> Result {
        let started = try Started(executable, arguments, in: directory, environment: environment)
        guard await started.exit.status(within: deadline) != nil else {
            await stop(started.process, started.exit)
            throw started.overran(deadline)
        }
        return try started.result()
    }

    /// Stops `process` (SIGTERM, then SIGKILL if it outlives `TestDeadlines.afterSignal`) and awaits its end.
    public static func stop(_ process: Process, _ exit: ProcessExit) async {
        guard !exit.hasEnded else { return }
        process.terminate()
        if await exit.status(within: TestDeadlines.afterSignal) == nil {
            kill(process.processIdentifier, SIGKILL)
            _ = await exit.status(within: TestDeadlines.afterSignal)
        }
    }

    /// `stop` for a synchronous caller (a `deinit`).
    public static func stopBlocking(_ process: Process, _ exit: ProcessExit) {
        guard !exit.hasEnded else { return }
        process.terminate()
        if exit.statusBlocking(within: TestDeadlines.afterSignal) == nil {
            kill(process.processIdentifier, SIGKILL)
            _ = exit.statusBlocking(within: TestDeadlines.afterSignal)
        }
    }

    /// The environment `run` gives the binary: this process's, `SHARELANE_STORE` unset, `extra` on top.
    ///
    /// - Throws: when the binary is not built.
    static func environment(_ extra: [String: String]) throws -> [String: String] {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw FixtureError(
                message: "no sharelane executable at \(executable.path); build it with `swift build --build-tests`")
        }
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "SHARELANE_STORE")
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// A process started with its output in files, and its end to wait for.
    private struct Started {
        let scratch: TemporaryDirectory
        let process = Process()
        let exit: ProcessExit
        let out: FileHandle
        let err: FileHandle
        let arguments: [String]

        var outURL: URL { scratch.url.appendingPathComponent("stdout") }
        var errURL: URL { scratch.url.appendingPathComponent("stderr") }

        init(_ executable: URL, _ arguments: [String], in directory: URL?, environment: [String: String]?) throws {
            scratch = try TemporaryDirectory("run")
            self.arguments = arguments
            let outURL = scratch.url.appendingPathComponent("stdout")
            let errURL = scratch.url.appendingPathComponent("stderr")
            _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
            _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
            out = try FileHandle(forWritingTo: outURL)
            err = try FileHandle(forWritingTo: errURL)
            exit = ProcessExit(process)
            process.executableURL = executable
            process.arguments = arguments
            if let directory { process.currentDirectoryURL = directory }
            if let environment { process.environment = environment }
            process.standardOutput = out
            process.standardError = err
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }

        /// What the ended process printed and how it exited.
        func result() throws -> Result {
            try out.close()
            try err.close()
            return Result(
                status: process.terminationStatus,
                stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
                stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
        }

        /// The error for a process stopped at its deadline: what it said before is the only clue to where it
        /// hung.
        func overran(_ deadline: Duration) -> FixtureError {
            let said = [outURL, errURL].compactMap { try? String(contentsOf: $0, encoding: .utf8) }
            let name = process.executableURL?.lastPathComponent ?? "the process"
            return FixtureError(
                message: "\(name) did not finish within \(TestDeadlines.describe(deadline)): \(arguments); "
                    + "it printed: \(said.joined(separator: "\n"))")
        }
    }

    /// The recipes of `Recipes/`, as paths relative to the package root.
    ///
    /// - Throws: `FixtureError` when the folder is missing or holds no recipe.
    public static func recipes() throws -> [String] {
        try FixtureFolder(BuiltProducts.packageRoot.appendingPathComponent("Recipes")).files()
            .map { "Recipes/\($0.lastPathComponent)" }
    }
}
