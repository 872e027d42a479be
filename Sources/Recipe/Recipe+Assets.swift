import ShareKit

extension Recipe {
    /// The file an `ASSETID` value loaded from `!asset PATH` names, as a path relative to the working
    /// directory the recipe was loaded from (or absolute, when the recipe was named by an absolute path).
    ///
    /// `!asset` values are `PATH#fnv1a64:HEX` (`AssetValue`), PATH relative to the recipe's directory; nil for
    /// any other value (a download URL, an asset a store keeps, a plain name).
    public func assetPath(for assetID: String) -> String? {
        Self.assetPath(for: assetID, recipeFile: file)
    }

    /// `assetPath(for:)` of a recipe loaded from `recipeFile`: what a write's `AssetFiles` keep, not
    /// the whole recipe with its records.
    public static func assetPath(for assetID: String, recipeFile: String) -> String? {
        guard let asset = AssetValue(text: assetID), asset.isFilePath, asset.isComputedChecksum else { return nil }
        return RecipePath.join(RecipePath.directory(of: recipeFile), asset.location)
    }
}
