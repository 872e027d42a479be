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

    /// Runs `sharelane ARGUMENTS` in `directory` (the package root by default). `SHARELANE_STORE` is unset
    /// unless `environment` sets it, so only `--store` or the default chooses the store.
    ///
    /// - Throws: when the binary is not built or the process cannot start.
    public static func run(
        _ arguments: [String], in directory: URL = BuiltProducts.packageRoot, environment extra: [String: String] = [:]
    ) throws -> Result {
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw FixtureError(
                message: "no sharelane executable at \(executable.path); build it with `swift build --build-tests`")
        }
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "SHARELANE_STORE")
        environment.merge(extra) { _, new in new }
        return try runProcess(executable, arguments, in: directory, environment: environment)
    }

    /// `run` from an async test, waited for on a thread of its own (`runOffPool`): Swift picks it wherever the
    /// caller can await, so that no test holds one of the shared pool's threads while a command runs.
    public static func run(
        _ arguments: [String], in directory: URL = BuiltProducts.packageRoot, environment extra: [String: String] = [:]
    ) async throws -> Result {
        try await runOffPool(arguments, in: directory, environment: extra)
    }

    /// `run`, waited for on a thread of its own: an async test that runs a long command (serve wrapped around
    /// a test suite) holds none of the shared pool's threads meanwhile, which the in-process emulators of other
    /// tests answer on (on a 2-core machine the pool has two).
    public static func runOffPool(
        _ arguments: [String], in directory: URL = BuiltProducts.packageRoot, environment extra: [String: String] = [:]
    ) async throws -> Result {
        try await offPool { try run(arguments, in: directory, environment: extra) }
    }

    /// Runs blocking work (waiting for a process) on a thread of its own and hands back what it made.
    public static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Swift.Result { try work() }) }
            thread.start()
        }
    }

    /// Runs any executable with standard input closed and its output caught in files (not pipes: a process
    /// that writes more than a pipe holds would block until it is read).
    ///
    /// - Parameter timeout: stop the process and throw after this many seconds; nil waits as long as it takes.
    /// - Throws: when the process cannot start, or outlives `timeout`.
    public static func runProcess(
        _ executable: URL, _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil,
        timeout: TimeInterval? = nil
    ) throws -> Result {
        let scratch = try TemporaryDirectory("run")
        let outURL = scratch.url.appendingPathComponent("stdout")
        let errURL = scratch.url.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if let environment { process.environment = environment }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        if let timeout {
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
                // What it said before it was stopped is the only clue to where it hung.
                let said = [outURL, errURL].compactMap { try? String(contentsOf: $0, encoding: .utf8) }
                throw FixtureError(
                    message: "\(executable.lastPathComponent) did not finish within \(Int(timeout)) s: \(arguments); "
                        + "it printed: \(said.joined(separator: "\n"))")
            }
        }
        process.waitUntilExit()
        try out.close()
        try err.close()
        return Result(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }

    /// The recipes of `Recipes/`, as paths relative to the package root.
    ///
    /// - Throws: `FixtureError` when the folder is missing or holds no recipe.
    public static func recipes() throws -> [String] {
        try FixtureFolder(BuiltProducts.packageRoot.appendingPathComponent("Recipes")).files()
            .map { "Recipes/\($0.lastPathComponent)" }
    }
}
