/// A store that keeps assets' bytes itself, under their checksums: the embedded store, in its file. `sharelane
/// serve` keeps what `assets/upload` receives here and answers downloads from it; a store over Web Services
/// reaches the service's bytes through their download URLs instead (`DownloadsAssets`).
public protocol KeepsAssetBytes: Store {
    /// Keeps an asset's bytes and answers their checksum, `fnv1a64:HEX` (`FNV1a64.checksum`). The same bytes
    /// are kept once.
    /// - Throws: `ShareError` (`BAD_REQUEST`) for bytes over CloudKit's 50 MB.
    func saveAssetBytes(_ bytes: [UInt8]) async throws -> String

    /// The bytes kept under `checksum`, or nil when there are none.
    func assetBytes(checksum: String) async throws -> [UInt8]?
}

extension Store {
    /// The store as the keeper of asset bytes it is.
    /// - Throws: `ShareError` (`BAD_REQUEST`) on a store that keeps none.
    public func assetKeeper() throws -> any KeepsAssetBytes {
        guard let keeper = self as? any KeepsAssetBytes else {
            throw ShareError(.badRequest, "\(displayName) keeps no asset bytes")
        }
        return keeper
    }
}
