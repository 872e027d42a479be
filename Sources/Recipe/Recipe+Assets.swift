import ShareKit

extension Recipe {
    /// The file an `ASSETID` value loaded from `!asset PATH` names, as a path relative to the working
    /// directory the recipe was loaded from (or absolute, when the recipe was named by an absolute path).
    ///
    /// `!asset` values are `PATH#fnv1a64:HEX`, PATH relative to the recipe's directory; nil for any other value.
    public func assetPath(for assetID: String) -> String? {
        guard let marker = assetID.range(of: "#fnv1a64:") else { return nil }
        let relative = String(assetID[..<marker.lowerBound])
        return RecipePath.join(RecipePath.directory(of: file), relative)
    }
}
