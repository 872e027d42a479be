import Foundation
import GRDB
import ShareKit

// Asset bytes: what `sharelane serve`'s `assets/upload` receives, kept in the store's file (table
// `asset`, migration v7) once per content, under its checksum.
extension SQLiteStore {
    public func saveAssetBytes(_ bytes: [UInt8]) async throws -> String {
        if let problem = CloudKitLimits.assetSizeProblem(bytes.count) {
            throw ShareError(.badRequest, "the asset \(problem)")
        }
        let checksum = FNV1a64.checksum(of: bytes)
        let data = Data(bytes)
        try await write("keeping an asset") { db in try Self.keep([(checksum, data)], db: db) }
        return checksum
    }

    /// Keeps bytes under their checksums (once per content).
    static func keep(_ assets: [(checksum: String, bytes: Data)], db: Database) throws {
        for (checksum, bytes) in assets {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO asset (checksum, size, bytes) VALUES (?, ?, ?)")
                .execute(arguments: [checksum, bytes.count, bytes])
        }
    }

    /// The operations with every local file an asset field names (`LocalAssetFile`, found in `files`) read
    /// and replaced by the asset the store keeps (`#fnv1a64:HEX;size=N`), as CloudKit keeps an asset's bytes,
    /// not a path, and the bytes to keep; read before the write transaction, kept in it.
    func keepingLocalAssets(_ operations: [RecordOperation], files: AssetFiles) throws
        -> ([RecordOperation], [(checksum: String, bytes: Data)])
    {
        let files = try LocalAssetFile.find(in: operations, files: files, storeName: displayName)
        guard !files.isEmpty else { return (operations, []) }
        var result = operations
        var assets: [(checksum: String, bytes: Data)] = []
        for file in files {
            let bytes = try file.read()
            let checksum = FNV1a64.checksum(of: bytes)
            assets.append((checksum, bytes))
            file.replace(with: .assetID(AssetValue(checksum: checksum, size: bytes.count).text), in: &result)
        }
        return (result, assets)
    }

    public func assetBytes(checksum: String) async throws -> [UInt8]? {
        try await read("reading an asset") { db in
            try Data.fetchOne(db, sql: "SELECT bytes FROM asset WHERE checksum = ?", arguments: [checksum])
                .map { [UInt8]($0) }
        }
    }
}
