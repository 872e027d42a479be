import Foundation

/// Finds the file an `ASSETID` value names, for the `http:` and `cloudkit:` stores to upload it: whoever
/// loaded the values (the command line, from the recipe) says how, so the client knows nothing of recipes.
public final class AssetFileResolver: @unchecked Sendable {
    private let lock = NSLock()
    private var resolve: (@Sendable (String) -> String?)?

    public init() {}

    /// Sets how an `ASSETID` text maps to a file path (e.g. `Recipe.assetPath(for:)`).
    public func set(_ resolve: @escaping @Sendable (String) -> String?) {
        lock.withLock { self.resolve = resolve }
    }

    /// The file the text names, or nil when nothing says.
    public func path(for text: String) -> String? {
        lock.withLock { resolve }?(text)
    }
}
