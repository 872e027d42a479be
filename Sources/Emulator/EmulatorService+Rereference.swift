import CloudKitWire
import Foundation
import Hummingbird
import ShareKit

extension EmulatorService {
    /// `assets/rereference`: for each asset field asked, the asset the record holds there, as a dictionary
    /// `records/modify` takes as another record's value (its `receipt` names the kept bytes, which are not
    /// sent again). The records are read as the caller, so only assets they may read are handed out; a
    /// missing record, a field that is not a single asset, answers an error in its place.
    func assetsRereference(body: Data, store: any Store, database: DatabaseScope, as user: UserRecordName)
        async throws -> ByteBuffer
    {
        let request = try decode(RereferenceAssetsRequest.self, from: body)
        try checkLimit(request.assets.count, "assets")
        let zoneID = request.zoneID?.zoneID ?? .defaultZone
        var names: [String] = []
        for field in request.assets where !names.contains(field.recordName) { names.append(field.recordName) }
        let found = try await store.lookupRecords(names, in: zoneID, database: database, as: user)
        var records: [String: Result<Record, ShareError>] = [:]
        for (name, outcome) in zip(names, found) {
            switch outcome {
            case .saved(let record): records[name] = .success(record)
            case .failed(_, let error): records[name] = .failure(error)
            default: records[name] = .failure(ShareError(.notFound, "no record named \(name) in this zone"))
            }
        }
        let entries = request.assets.map { field -> RereferenceAssetsResponse.Entry in
            switch records[field.recordName] {
            case .success(let record)?:
                guard case .assetID(let text)? = record.fields[field.fieldName],
                    let asset = AssetValue(text: text), !asset.checksum.isEmpty
                else {
                    return .init(
                        field,
                        error: ShareError(
                            .badRequest,
                            "field \(field.fieldName) of record \(field.recordName) holds no asset (an ASSETID value)",
                            subject: field.recordName))
                }
                let served = servedChecksum?(asset.checksum).fileChecksum ?? asset.checksum
                var wire = WireAsset(assetIDText: AssetValue(checksum: asset.checksum, size: asset.size).text)
                wire?.fileChecksum = served
                wire?.receipt = Self.receipt(served)
                return .init(field, asset: wire ?? WireAsset(fileChecksum: served, size: asset.size))
            case .failure(let error)?:
                return .init(field, error: error)
            case nil:
                return .init(field, error: ShareError(.notFound, "no record named \(field.recordName) in this zone"))
            }
        }
        return try encode(RereferenceAssetsResponse(assets: entries))
    }
}
