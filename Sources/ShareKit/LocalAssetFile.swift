import Foundation

/// A local file an `ASSETID` value of a record save names (`PATH#fnv1a64:HEX`, a recipe's `!asset`): a
/// store keeps the file's bytes before it saves the record, as CloudKit holds an asset's bytes and not a
/// path — the embedded store in its own file, a Web Services store through `assets/upload`. Both find the
/// files here, so the rule (which values are files, where they are, that the bytes are the ones planned) is
/// one.
public struct LocalAssetFile: Sendable {
    /// The operation's position in the batch.
    public var operation: Int
    public var recordName: String
    public var recordType: String
    public var field: String
    /// The position in an `ASSETID_LIST`; nil for an `ASSETID` field.
    public var element: Int?
    public var asset: AssetValue
    /// Where the file is, as the write's `AssetFiles` say.
    public var path: String

    /// Every local file the saves among `operations` name, in order (fields by name, list elements in order).
    /// - Throws: `ShareError.badRequest` when `files` does not say where one is.
    public static func find(in operations: [RecordOperation], files: AssetFiles, storeName: String) throws
        -> [LocalAssetFile]
    {
        var found: [LocalAssetFile] = []
        for (index, operation) in operations.enumerated() {
            guard case .record(let record) = operation.item, !operation.kind.isDelete else { continue }
            // Most records hold no asset: they cost one pass over their values, not a sort.
            let holdsAssets = record.fields.values.contains { value in
                switch value {
                case .assetID, .list(.assetID, _): true
                default: false
                }
            }
            guard holdsAssets else { continue }
            for (field, value) in record.fields.sorted(by: { $0.key < $1.key }) {
                let elements: [(Int?, FieldValue)] =
                    if case .list(.assetID, let values) = value {
                        values.enumerated().map { ($0.offset, $0.element) }
                    } else {
                        [(nil, value)]
                    }
                for (element, item) in elements {
                    guard case .assetID(let text) = item, let asset = AssetValue(text: text), asset.isFilePath,
                        asset.receipt == nil
                    else { continue }
                    guard let path = files.path(for: text) else {
                        throw ShareError(
                            .badRequest,
                            "field \(field) of record \(record.recordName) names the file \(asset.location), whose "
                                + "bytes \(storeName) must keep, but it does not know where it is: apply its recipe, or "
                                + "a plan saved by `sharelane plan --out`",
                            subject: record.recordName)
                    }
                    found.append(
                        LocalAssetFile(
                            operation: index, recordName: record.recordName, recordType: record.recordType,
                            field: field, element: element, asset: asset, path: path))
                }
            }
        }
        return found
    }

    /// The file's bytes.
    /// - Throws: `ShareError.badRequest` when it cannot be read, is over CloudKit's 50 MB, or its bytes are
    ///   not the ones planned (its `fnv1a64` checksum differs): a file changed since its plan is not kept.
    public func read() throws -> Data {
        // Not opened unless it is a regular file: opening a FIFO waits for a writer, forever if none comes.
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            throw ShareError(.badRequest, "the asset file \(path) is not a regular file", subject: recordName)
        }
        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ShareError(.badRequest, "cannot read the asset file \(path): \(error.localizedDescription)")
        }
        if let problem = CloudKitLimits.assetSizeProblem(bytes.count) {
            throw ShareError(.badRequest, "the asset file \(path) \(problem)", subject: recordName)
        }
        let digest = FNV1a64.checksum(of: bytes)
        if asset.isComputedChecksum, digest != asset.checksum {
            throw ShareError(
                .badRequest,
                "the asset file \(path) changed since it was planned (\(asset.checksum), now \(digest)); plan again",
                subject: recordName)
        }
        return bytes
    }

    /// Puts `value` where the file was named in `operations`.
    public func replace(with value: FieldValue, in operations: inout [RecordOperation]) {
        guard case .record(var record) = operations[operation].item else { return }
        if let element, case .list(let type, var values)? = record.fields[field] {
            values[element] = value
            record.fields[field] = .list(elementType: type, values)
        } else {
            record.fields[field] = value
        }
        operations[operation].item = .record(record)
    }
}
