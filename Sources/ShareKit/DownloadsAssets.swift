/// A store that reaches an asset's bytes through the URL its value carries (`AssetValue.isDownloadURL`), as
/// CloudKit Web Services hands out a download URL for each asset of a record it answers.
///
/// A local store keeps the bytes themselves and answers them by checksum (`Store.assetBytes(checksum:)`).
public protocol DownloadsAssets: Store {
    /// The asset's bytes, downloaded; nil for a value that carries no download URL.
    /// - Throws: `ShareError` when the download fails, or its bytes are not the ones the value names.
    func downloadAsset(_ asset: AssetValue) async throws -> [UInt8]?
}
