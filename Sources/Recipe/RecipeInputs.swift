import Crypto
import Foundation

/// What a loaded recipe was made from besides the loader's own settings (`--var`, `--env`): the files read
/// (the recipe, its includes, the `.env` files looked for, `!asset` files) and the environment variables that
/// `${NAME}` consulted, each by a digest of its content or value.
///
/// Loading is a function of these: when none changed, loading again gives the same recipe. An incremental
/// plan uses that to plan from its cache file without loading a recipe whose inputs are unchanged
/// (Docs/Plans.md, "Incremental plans"). Values are kept only as digests: the cache file never holds an
/// environment variable's value.
public struct RecipeInputs: Sendable, Hashable, Codable {
    /// Each file by absolute path: the SHA-256 of its content, or "" for a file looked for that did not exist.
    public var files: [String: String]
    /// Each environment variable consulted, by name: a SHA-256 of its value, or "" when it was not set.
    public var environment: [String: String]

    public init(files: [String: String] = [:], environment: [String: String] = [:]) {
        self.files = files
        self.environment = environment
    }

    /// Whether every file and environment variable is as it was when the recipe was loaded.
    public func isCurrent(environment now: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        for (name, digest) in environment where Self.digest(variable: name, value: now[name]) != digest {
            return false
        }
        for (path, digest) in files where digest == Self.notRegularFile || Self.digest(file: path) != digest {
            return false
        }
        return true
    }

    /// What `digest(file:)` gives a FIFO, a socket or a device: never current, so a recipe read from one (a
    /// pipe: `plan <(…)`) is always loaded again.
    static let notRegularFile = "not a regular file"

    /// The digest of a file's content, or "" when it cannot be read.
    static func digest(file path: String) -> String {
        // Not opened (opening a FIFO waits for a writer): an include become a FIFO since the last plan is then
        // loaded again, and refused by the load.
        if RecipePath.notRegularFile(path) != nil { return notRegularFile }
        guard let data = FileManager.default.contents(atPath: path) else { return "" }
        return SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// A digest of an environment variable's value (with its name, so equal values of two variables differ),
    /// or "" when it is not set.
    static func digest(variable name: String, value: String?) -> String {
        guard let value else { return "" }
        return SHA256.hash(data: Data("sharelane-variable\u{0}\(name)\u{0}\(value)".utf8)).map {
            String(format: "%02x", $0)
        }.joined()
    }
}

/// The files and environment variables one load consults, noted as it goes and turned into `RecipeInputs`
/// at the end. A reference, so that the value types that read (the include resolver, the variables, the
/// decoder) share one log.
final class InputLog {
    private(set) var files: Set<String> = []
    private(set) var variables: Set<String> = []

    func read(file path: String) {
        files.insert(URL(fileURLWithPath: path).standardizedFileURL.path)
    }

    func consulted(variable name: String) {
        variables.insert(name)
    }

    /// Notes what another log noted.
    func merge(_ other: InputLog) {
        files.formUnion(other.files)
        variables.formUnion(other.variables)
    }

    /// The digests of everything noted, as they are now.
    func inputs(environment: [String: String]) -> RecipeInputs {
        RecipeInputs(
            files: Dictionary(uniqueKeysWithValues: files.map { ($0, RecipeInputs.digest(file: $0)) }),
            environment: Dictionary(
                uniqueKeysWithValues: variables.map { ($0, RecipeInputs.digest(variable: $0, value: environment[$0])) })
        )
    }
}
