import Foundation

/// Runs the built `sharelane` binary, as a user would from a shell, for the lane end-to-end tests.
struct LaneBinary {
    /// What one run printed and how it exited.
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var output: String { stdout + stderr }
    }

    /// The package root: this file is `Tests/EndToEndTests/LaneBinary.swift`.
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `.build/debug/sharelane`, built by `swift build` before the tests run.
    static let executable = packageRoot.appendingPathComponent(".build/debug/sharelane")

    /// A fresh directory under the system's temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("sharelane-lanes-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `sharelane ARGUMENTS` in `directory` (the package root by default), with `SHARELANE_STORE` unset
    /// so that only `--store` or the default chooses the store.
    static func run(
        _ arguments: [String], in directory: URL = packageRoot, environment extra: [String: String] = [:]
    ) throws -> Result {
        let scratch = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "SHARELANE_STORE")
        environment.merge(extra) { _, new in new }
        process.environment = environment
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try out.close()
        try err.close()
        return Result(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }

    /// The recipes of `Recipes/`, as paths relative to the package root.
    static func recipes() throws -> [String] {
        let directory = packageRoot.appendingPathComponent("Recipes")
        return try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
            .sorted()
            .map { "Recipes/\($0)" }
    }

    /// A lane as `sharelane lanes --json` lists it.
    struct ListedLane: Decodable, CustomStringConvertible {
        var name: String
        var desc: String?
        var `private`: Bool
        var description: String { name }

        /// Lanes that fail on purpose, to show a refusal, say so at the start of their description.
        var failsOnPurpose: Bool { desc?.hasPrefix("Fails on purpose") ?? false }
    }

    /// Every lane of a recipe, read through `sharelane lanes --json --all`.
    static func lanes(of recipe: String) throws -> [ListedLane] {
        let result = try run(["lanes", recipe, "--all", "--json"])
        guard result.status == 0 else {
            throw LaneBinaryError(message: "sharelane lanes \(recipe) exited \(result.status): \(result.output)")
        }
        return try JSONDecoder().decode([ListedLane].self, from: Data(result.stdout.utf8))
    }
}

struct LaneBinaryError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
