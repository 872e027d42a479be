import Foundation

/// A `sharelane serve` process started by a test on a free loopback port, over a fresh store file; `stop()`
/// ends it and removes its directory.
public final class ServeProcess: @unchecked Sendable {
    public let url: String
    public let apiToken: String
    private let process: Process
    private let directory: TemporaryDirectory

    /// What the server logged so far (one line per request).
    public var log: String {
        (try? String(contentsOf: directory.url.appendingPathComponent("serve.log"), encoding: .utf8)) ?? ""
    }

    /// Starts the server and waits (up to ten seconds) until it prints the address it listens on.
    ///
    /// - Parameter extraArguments: more options for `serve` (`--strict-tokens`).
    /// - Throws: when the server cannot start or says nothing in time.
    public init(apiToken: String = "lanes-test-token", extraArguments: [String] = []) throws {
        self.apiToken = apiToken
        directory = try TemporaryDirectory("serve")
        let log = directory.url.appendingPathComponent("serve.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process = Process()
        process.currentDirectoryURL = directory.url
        url = try SharelaneBinary.startListening(
            process,
            [
                "serve", "--store", "sqlite:" + directory.file("served.sqlite"), "--port", "0", "--api-token", apiToken,
            ] + extraArguments, log: log, what: "sharelane serve")
    }

    /// Runs `sharelane ARGUMENTS --store URL` against this server, with its API token and `environment` in
    /// the environment.
    ///
    /// - Throws: when the binary cannot run.
    public func run(_ arguments: [String], environment: [String: String] = [:]) throws -> SharelaneBinary.Result {
        try SharelaneBinary.run(
            arguments + ["--store", url], environment: environment.merging(["CLOUDKIT_API_TOKEN": apiToken]) { $1 })
    }

    /// Stops the server.
    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}

extension SharelaneBinary {
    /// Starts `sharelane ARGUMENTS` in `process`, its output in `log`, and waits (up to ten seconds) until it
    /// prints the loopback address it listens on: `serve` and `record` both print one.
    ///
    /// - Returns: the address, `http://127.0.0.1:PORT`.
    /// - Throws: when the process cannot start or prints no address in time (then it is stopped).
    public static func startListening(_ process: Process, _ arguments: [String], log: URL, what: String) throws
        -> String
    {
        let handle = try FileHandle(forWritingTo: log)
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let range = text.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression) {
                return String(text[range])
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        process.terminate()
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        throw FixtureError(message: "\(what) did not start within 10 s:\n\(text)")
    }
}
