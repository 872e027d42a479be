import Foundation
import ShareKit

/// How `Exporter` brings assets beside the recipe it writes: each asset field's bytes are fetched and
/// written to `assets/ZONE/RECORD.FIELD` under `directory`, and the recipe says `!asset PATH`, so that
/// planning the export reads the same bytes and shows no changes.
public struct ExportAssets: Sendable {
    /// The directory the recipe is written to; asset paths are relative to it.
    public var directory: String
    /// The bytes of an asset (a `downloadURL`, or bytes the store keeps), or nil when it has none to give.
    public var fetch: @Sendable (AssetValue) async throws -> [UInt8]?

    public init(directory: String, fetch: @escaping @Sendable (AssetValue) async throws -> [UInt8]?) {
        self.directory = directory
        self.fetch = fetch
    }

    /// The path, relative to the recipe, of a record's asset field: `assets/ZONE/RECORD.FIELD`, with any
    /// character other than a letter, digit, `-`, `_` or `.` written `_`.
    static func relativePath(zone: String, record: String, field: String) -> String {
        func safe(_ text: String) -> String {
            let mapped = String(text.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" })
            return mapped.isEmpty || mapped.hasPrefix(".") ? "_" + mapped : mapped
        }
        return "assets/\(safe(zone))/\(safe(record)).\(safe(field))"
    }

    /// Fetches and writes the assets of `records` (of zone `zone`); the `ASSETID` texts written, by path.
    func write(_ records: [Record], zone: String, store: String) async throws -> [String: String] {
        var written: [String: String] = [:]
        for record in records {
            for (field, value) in record.fields {
                guard case .assetID(let text) = value, let asset = AssetValue(text: text) else { continue }
                let bytes: [UInt8]?
                do {
                    bytes = try await fetch(asset)
                } catch let error as ShareError {
                    throw PlannerError.storeFailed(
                        operation: "downloading the asset in field \(field) of \(record.recordName)", subject: store,
                        error)
                }
                guard let bytes else { continue }
                let relative = Self.relativePath(zone: zone, record: record.recordName, field: field)
                let url = URL(fileURLWithPath: directory.isEmpty ? "." : directory).appendingPathComponent(relative)
                do {
                    try FileManager.default.createDirectory(
                        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try Data(bytes).write(to: url)
                } catch {
                    throw PlannerError.storeFailed(
                        operation: "writing the asset file \(url.path)", subject: store,
                        ShareError(.internalError, error.localizedDescription))
                }
                written[text] = relative
            }
        }
        return written
    }
}
