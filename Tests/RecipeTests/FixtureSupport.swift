import Foundation
import Recipe
import SharelaneTestSupport
import Testing

/// Finds the fixtures copied into the test bundle.
enum Fixtures {
    static var directory: URL {
        get throws { try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil)) }
    }

    /// The `.yaml` files directly inside `subdirectory`, sorted by name.
    ///
    /// - Throws: when the folder is missing or holds no fixture, so a test never runs over zero cases.
    static func files(in subdirectory: String) throws -> [URL] {
        try FixtureFolder(try directory.appendingPathComponent(subdirectory), extensions: ["yaml"]).files()
    }

    /// The fixtures' names in `subdirectory`, without `.yaml`.
    ///
    /// - Throws: when the folder is missing or holds no fixture.
    static func names(in subdirectory: String) throws -> [String] {
        try files(in: subdirectory).map { $0.deletingPathExtension().lastPathComponent }
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
func loadErrors(yaml: String, file: String = "test.yaml", loader: RecipeLoader = RecipeLoader(environment: [:]))
    -> [RecipeError]
{
    do {
        _ = try loader.load(yaml: yaml, file: file)
        return []
    } catch {
        return error.errors
    }
}
