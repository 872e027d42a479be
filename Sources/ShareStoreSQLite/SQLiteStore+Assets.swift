import Foundation
import GRDB
import ShareKit

// Asset bytes (issue 14): what `sharelane serve`'s `assets/upload` receives, kept in the store's file (table
// `asset`, migration v7) once per content, under its checksum.
extension SQLiteStore {
    public func saveAssetBytes(_ bytes: [UInt8]) async throws -> String {
        guard bytes.count <= CloudKitLimits.assetBytes else {
            throw ShareError(
                .badRequest,
                "the asset is \(CloudKitLimits.describe(bytes: bytes.count)), over CloudKit's limit of 50 MB an asset")
        }
        let checksum = FNV1a64.checksum(of: bytes)
        let data = Data(bytes)
        try await write("keeping an asset") { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO asset (checksum, size, bytes) VALUES (?, ?, ?)",
                arguments: [checksum, data.count, data])
        }
        return checksum
    }

    public func assetBytes(checksum: String) async throws -> [UInt8]? {
        try await read("reading an asset") { db in
            try Data.fetchOne(db, sql: "SELECT bytes FROM asset WHERE checksum = ?", arguments: [checksum])
                .map { [UInt8]($0) }
        }
    }
}
