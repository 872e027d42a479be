import Foundation

/// Files of one kind in a folder of fixtures, listed so that a missing or empty folder is an error rather
/// than a test over zero cases.
public struct FixtureFolder: Sendable {
    public let url: URL
    public let extensions: Set<String>

    public init(_ url: URL, extensions: Set<String> = ["yaml", "yml"]) {
        self.url = url
        self.extensions = extensions
    }

    /// The matching files directly inside the folder, sorted by name.
    ///
    /// - Throws: `FixtureError` when the folder is missing or holds no matching file.
    public func files() throws -> [URL] {
        let found: [URL]
        do {
            found = try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
        } catch {
            throw FixtureError(message: "no fixture folder at \(url.path): \(error)")
        }
        let files = found.filter { extensions.contains($0.pathExtension) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        guard !files.isEmpty else {
            throw FixtureError(
                message: "the fixture folder \(url.path) holds no .\(extensions.sorted().joined(separator: "/")) file")
        }
        return files
    }

    /// The files' names without their extension, sorted.
    ///
    /// - Throws: `FixtureError` when the folder is missing or holds no matching file.
    public func names() throws -> [String] { try files().map { $0.deletingPathExtension().lastPathComponent } }
}

/// A fixture folder that is missing or empty.
public struct FixtureError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
    public init(message: String) { self.message = message }
}
