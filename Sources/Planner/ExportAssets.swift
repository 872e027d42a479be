import Foundation
import Recipe
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

    /// Fetches and writes the assets of `records` (of zone `zone`): an `ASSETID` field to
    /// `assets/ZONE/RECORD.FIELD`, each element of an `ASSETID_LIST` to `assets/ZONE/RECORD.FIELD.N` (N from
    /// 1); the paths written, by `RecipeWriter.assetKey`. Each content is fetched once.
    func write(_ records: [Record], zone: String, store: String) async throws -> [String: String] {
        var written: [String: String] = [:]
        var fetched: [String: [UInt8]?] = [:]
        for record in records {
            for (field, value) in record.fields.sorted(by: { $0.key < $1.key }) {
                let base = Self.relativePath(zone: zone, record: record.recordName, field: field)
                let elements: [(Int?, String, String)]
                switch value {
                case .assetID(let text):
                    elements = [(nil, text, base)]
                case .list(.assetID, let values):
                    elements = values.enumerated().compactMap { index, element in
                        guard case .assetID(let text) = element else { return nil }
                        return (index, text, base + ".\(index + 1)")
                    }
                default:
                    continue
                }
                for (element, text, relative) in elements {
                    guard let asset = AssetValue(text: text) else { continue }
                    let bytes: [UInt8]?
                    if let known = fetched[asset.checksum] {
                        bytes = known
                    } else {
                        bytes = try await fetch(asset, field: field, record: record, store: store)
                        fetched[asset.checksum] = bytes
                    }
                    guard let bytes else { continue }
                    try save(bytes, to: relative, store: store)
                    written[
                        RecipeWriter.assetKey(zone: zone, record: record.recordName, field: field, element: element)] =
                        relative
                }
            }
        }
        return written
    }

    /// The bytes of one asset, or nil when the store has none to give.
    private func fetch(_ asset: AssetValue, field: String, record: Record, store: String) async throws -> [UInt8]? {
        do {
            return try await fetch(asset)
        } catch let error as ShareError {
            throw PlannerError.storeFailed(
                operation: "downloading the asset in field \(field) of \(record.recordName)", subject: store, error)
        }
    }

    /// Writes bytes to `relative` under `directory`.
    private func save(_ bytes: [UInt8], to relative: String, store: String) throws {
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
    }
}
