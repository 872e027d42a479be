import Foundation

/// A fresh directory under the system's temporary directory, removed with everything in it when the last
/// reference goes, so tests leave nothing behind.
public final class TemporaryDirectory: @unchecked Sendable {
    /// The directory.
    public let url: URL

    /// The directory's path.
    public var path: String { url.path }

    /// Creates `sharelane-PREFIX-UUID` in the temporary directory.
    ///
    /// - Throws: when the directory cannot be created.
    public init(_ prefix: String = "tests") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("sharelane-\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The path of `name` inside the directory (not created).
    public func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `text` to `name` inside the directory (creating folders on the way) and returns its path.
    ///
    /// - Throws: when the file cannot be written.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    /// Runs `body` with a fresh directory and removes it afterwards.
    public static func with<T>(_ prefix: String = "tests", _ body: (TemporaryDirectory) async throws -> T)
        async throws -> T
    {
        let directory = try TemporaryDirectory(prefix)
        defer { withExtendedLifetime(directory) {} }
        return try await body(directory)
    }
}
