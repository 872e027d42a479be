import Foundation

/// A `sharelane serve` started by a test on a free loopback port, over a fresh store file, stopped with
/// `stop()`.
final class LaneServer: @unchecked Sendable {
    let url: String
    let apiToken = "lanes-test-token"
    private let process: Process
    private let directory: URL

    /// What the server logged so far (one line per request).
    var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("serve.log"), encoding: .utf8)) ?? ""
    }

    /// Starts the server and waits (up to ten seconds) until it prints the address it listens on.
    init() throws {
        directory = try LaneBinary.temporaryDirectory()
        let log = directory.appendingPathComponent("serve.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process = Process()
        process.executableURL = LaneBinary.executable
        process.arguments = [
            "serve", "--store", "sqlite:" + directory.appendingPathComponent("served.sqlite").path, "--port", "0",
            "--api-token", apiToken,
        ]
        process.currentDirectoryURL = directory
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        var found: String?
        while found == nil, Date() < deadline, process.isRunning {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let range = text.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression) {
                found = String(text[range])
            } else {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        guard let found else {
            process.terminate()
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw LaneBinaryError(message: "sharelane serve did not start within 10 s:\n\(text)")
        }
        url = found
    }

    /// Runs `sharelane ARGUMENTS --store URL` against this server, with its API token in the environment.
    func run(_ arguments: [String]) throws -> LaneBinary.Result {
        try LaneBinary.run(arguments + ["--store", url], environment: ["CLOUDKIT_API_TOKEN": apiToken])
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
