import Foundation
import PlanModel
import Recipe
import ShareKit

/// How `Exporter` brings assets beside the recipe it writes: each asset field's bytes are fetched and
/// written to `assets/ZONE/RECORD.FIELD[.EXT]` under `directory`, and the recipe says `!asset PATH`, so that
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

    /// The usual extension of a file whose bytes start as these do (images, PDF, audio and video, archives),
    /// or nil when they say no kind.
    static func fileExtension(of bytes: [UInt8]) -> String? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<offset + prefix.count]) == prefix
        }
        let ascii = { (text: String) in Array(text.utf8) }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "png" }
        if starts([0xFF, 0xD8, 0xFF]) { return "jpg" }
        if starts(ascii("GIF87a")) || starts(ascii("GIF89a")) { return "gif" }
        if starts(ascii("%PDF-")) { return "pdf" }
        if starts(ascii("RIFF")), starts(ascii("WEBP"), at: 8) { return "webp" }
        if starts(ascii("RIFF")), starts(ascii("WAVE"), at: 8) { return "wav" }
        if starts(ascii("ftyp"), at: 4) {
            let brand = bytes.count >= 12 ? String(decoding: bytes[8..<12], as: UTF8.self) : ""
            if ["heic", "heix", "mif1", "msf1"].contains(brand) { return "heic" }
            if brand.hasPrefix("M4A") { return "m4a" }
            if brand == "qt  " { return "mov" }
            return "mp4"
        }
        if starts(ascii("ID3")) { return "mp3" }
        if starts([0x50, 0x4B, 0x03, 0x04]) { return "zip" }
        return nil
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
                    // CloudKit keeps no file name: the kind of file its bytes are gives it its extension, so
                    // that a photo opens as one (`assets/Trips/lisbon.cover.png`).
                    let relative = relative + (Self.fileExtension(of: bytes).map { "." + $0 } ?? "")
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
