import Foundation

/// A `sharelane serve` process started by a test on a free loopback port, over a fresh store file; `stop()`
/// ends it and removes its directory.
public final class ServeProcess: @unchecked Sendable {
    public let url: String
    public let apiToken: String
    private let server: ListeningProcess
    private let directory: TemporaryDirectory

    /// What the server logged so far (one line per request).
    public var log: String { server.output }

    /// Starts the server and awaits the address it listens on, holding no thread meanwhile (`start` by
    /// another name).
    ///
    /// - Parameter extraArguments: more options for `serve` (`--strict-tokens`).
    /// - Throws: when the server cannot start or says nothing within `TestDeadlines.serverStart`.
    public convenience init(apiToken: String = "lanes-test-token", extraArguments: [String] = []) async throws {
        let directory = try TemporaryDirectory("serve")
        let server = try await ListeningProcess.start(
            Self.arguments(directory, apiToken, extraArguments), log: Self.log(directory), in: directory.url,
            what: "sharelane serve")
        self.init(apiToken: apiToken, server: server, directory: directory)
    }

    private init(apiToken: String, server: ListeningProcess, directory: TemporaryDirectory) {
        self.apiToken = apiToken
        self.server = server
        self.directory = directory
        url = server.url
    }

    /// Starts the server and awaits the address it listens on, holding no thread meanwhile.
    ///
    /// - Parameter extraArguments: more options for `serve` (`--strict-tokens`).
    /// - Throws: when the server cannot start or says nothing within `TestDeadlines.serverStart`.
    public static func start(apiToken: String = "lanes-test-token", extraArguments: [String] = []) async throws
        -> ServeProcess
    {
        let directory = try TemporaryDirectory("serve")
        let server = try await ListeningProcess.start(
            arguments(directory, apiToken, extraArguments), log: log(directory), in: directory.url,
            what: "sharelane serve")
        return ServeProcess(apiToken: apiToken, server: server, directory: directory)
    }

    /// Runs `sharelane ARGUMENTS --store URL` against this server, with its API token and `environment` in
    /// the environment, holding no thread while the command runs.
    ///
    /// - Throws: when the binary cannot run.
    public func run(_ arguments: [String], environment: [String: String] = [:]) async throws
        -> SharelaneBinary.Result
    {
        try await SharelaneBinary.run(
            arguments + ["--store", url], environment: environment.merging(["CLOUDKIT_API_TOKEN": apiToken]) { $1 })
    }

    /// `run` from an async test, holding no thread while the command runs.
    ///
    /// - Throws: when the binary cannot run.
    public func running(_ arguments: [String], environment: [String: String] = [:]) async throws
        -> SharelaneBinary.Result
    {
        try await SharelaneBinary.run(
            arguments + ["--store", url], environment: environment.merging(["CLOUDKIT_API_TOKEN": apiToken]) { $1 })
    }

    /// Stops the server.
    public func stop() { server.stopBlocking() }

    deinit { stop() }

    private static func arguments(_ directory: TemporaryDirectory, _ apiToken: String, _ extra: [String]) -> [String] {
        ["serve", "--store", "sqlite:" + directory.file("served.sqlite"), "--port", "0", "--api-token", apiToken]
            + extra
    }

    private static func log(_ directory: TemporaryDirectory) -> URL {
        directory.url.appendingPathComponent("serve.log")
    }
}
