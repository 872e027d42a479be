import Foundation
import Synchronization

/// Finds the file an `ASSETID` value names, for the `http:` and `cloudkit:` stores to upload it: whoever
/// loaded the values (the command line, from the recipe) says how, so the client knows nothing of recipes.
public final class AssetFileResolver: Sendable {
    private let resolve = Mutex<(@Sendable (String) -> String?)?>(nil)

    public init() {}

    /// Sets how an `ASSETID` text maps to a file path (e.g. `Recipe.assetPath(for:)`).
    public func set(_ resolve: @escaping @Sendable (String) -> String?) {
        self.resolve.withLock { $0 = resolve }
    }

    /// The file the text names, or nil when nothing says.
    public func path(for text: String) -> String? {
        resolve.withLock { $0 }?(text)
    }
}

/// A store that keeps or uploads the local files of `ASSETID` values, found through its resolver.
public protocol TakesAssetFiles: Sendable {
    var assetFiles: AssetFileResolver { get }
}
