import Foundation
import Recipe
import Testing

/// Finds the fixtures copied into the test bundle.
enum Fixtures {
    static var directory: URL {
        get throws { try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil)) }
    }

    /// The `.yaml` files directly inside `subdirectory`, sorted by name.
    static func files(in subdirectory: String) throws -> [URL] {
        let dir = try directory.appendingPathComponent(subdirectory)
        return try FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "yaml" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func names(in subdirectory: String) -> [String] {
        ((try? files(in: subdirectory)) ?? []).map { $0.deletingPathExtension().lastPathComponent }
    }

    static func url(_ subdirectory: String, _ name: String) throws -> URL {
        try directory.appendingPathComponent(subdirectory).appendingPathComponent(name + ".yaml")
    }

    /// The text of `# KEY: VALUE` header comments.
    static func header(_ key: String, in url: URL) throws -> [String] {
        let text = try String(contentsOf: url, encoding: .utf8)
        let prefix = "# \(key): "
        return text.split(separator: "\n").filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }
}

/// A scratch directory for recipes written by a test, removed afterwards.
struct ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("sharelane-recipe-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Loads a recipe expected to fail and returns its errors.
func loadErrors(_ path: String, loader: RecipeLoader = RecipeLoader(environment: [:])) -> [RecipeError] {
    do {
        _ = try loader.load(path: path)
        return []
    } catch {
        return error.errors
    }
}

/// Loads a recipe given as text, expected to fail, and returns its errors.
func loadErrors(yaml: String, file: String = "test.yaml", loader: RecipeLoader = RecipeLoader(environment: [:])) -> [RecipeError] {
    do {
        _ = try loader.load(yaml: yaml, file: file)
        return []
    } catch {
        return error.errors
    }
}
