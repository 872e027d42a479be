/// Where the local files of `ASSETID` values (`PATH#fnv1a64:HEX`, a recipe's `!asset`) are, by their text: a
/// value a write carries (`ZoneWrite.assetFiles`), so that the store keeps or uploads the files' bytes
/// before it saves the records. Whoever loaded the values says where (an apply, from its plan's
/// `assetFiles`; a lane, from its recipe), and the stores know nothing of recipes and hold no state of it.
public struct AssetFiles: Sendable {
    private let lookup: @Sendable (String) -> String?

    /// The files of a plan: paths by `ASSETID` text.
    public init(_ paths: [String: String]) {
        lookup = { text in paths[text] }
    }

    /// The files a function finds, e.g. beside the recipe that loaded the values (`Recipe.assetPath(for:)`).
    public init(resolving lookup: @escaping @Sendable (String) -> String?) {
        self.lookup = lookup
    }

    /// No file: a write naming one is refused, saying so.
    public static let none = AssetFiles([:])

    /// The file the text names, or nil when nothing says.
    public func path(for text: String) -> String? {
        lookup(text)
    }
}
