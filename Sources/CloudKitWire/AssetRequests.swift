import ShareKit

/// `assets/upload`: `{zoneID?, tokens: [{recordName?, recordType, fieldName}]}` (at most 200 tokens).
package struct UploadAssetsRequest: Codable, Sendable {
    package var zoneID: WireZoneID?
    package var tokens: [Token]

    /// One asset field of a record: the field an upload URL is for.
    package struct Token: Codable, Sendable, Hashable {
        package var recordName: String?
        package var recordType: String
        package var fieldName: String

        package init(recordName: String?, recordType: String, fieldName: String) {
            self.recordName = recordName
            self.recordType = recordType
            self.fieldName = fieldName
        }
    }

    package init(zoneID: ZoneID?, tokens: [Token]) {
        self.zoneID = zoneID.map(WireZoneID.init)
        self.tokens = tokens
    }
}

/// The answer to `assets/upload`: `{tokens: [{recordName, fieldName, url}]}`, one per token asked, in order.
package struct UploadAssetsResponse: Codable, Sendable {
    package var tokens: [Token]

    /// Where to POST one asset's bytes.
    package struct Token: Codable, Sendable, Hashable {
        package var recordName: String
        package var fieldName: String
        package var url: String

        package init(recordName: String, fieldName: String, url: String) {
            self.recordName = recordName
            self.fieldName = fieldName
            self.url = url
        }
    }

    package init(tokens: [Token]) {
        self.tokens = tokens
    }
}

/// The answer to POSTing an asset's bytes to its upload URL: `{singleFile: {fileChecksum, receipt, size,
/// wrappingKey?, referenceChecksum?}}`.
package struct UploadedAssetResponse: Codable, Sendable {
    package var singleFile: WireAsset

    package init(singleFile: WireAsset) {
        self.singleFile = singleFile
    }
}

/// `assets/rereference`: `{zoneID?, assets: [{recordName, fieldName}]}`, the asset fields whose assets
/// another record is to reference (at most 200).
package struct RereferenceAssetsRequest: Codable, Sendable {
    package var zoneID: WireZoneID?
    package var assets: [Field]

    /// One asset field of a record (the reference's Assets Field Dictionary).
    package struct Field: Codable, Sendable, Hashable {
        package var recordName: String
        package var fieldName: String

        package init(recordName: String, fieldName: String) {
            self.recordName = recordName
            self.fieldName = fieldName
        }
    }

    package init(zoneID: ZoneID?, assets: [Field]) {
        self.zoneID = zoneID.map(WireZoneID.init)
        self.assets = assets
    }
}

/// The answer to `assets/rereference`: `{assets: [entry]}`, one per field asked, in order. The reference
/// says "an array of asset value dictionaries" and names no key; serve answers under `assets`, as the request
/// asks, each entry an Asset Dictionary that `records/modify` saves as another record's value
/// (`{fileChecksum, size, receipt, downloadURL}`) with the `recordName` and `fieldName` it answers, or
/// `{recordName, fieldName, serverErrorCode, reason}`.
package struct RereferenceAssetsResponse: Codable, Sendable {
    package var assets: [Entry]

    package struct Entry: Codable, Sendable, Hashable {
        package var recordName: String
        package var fieldName: String
        package var fileChecksum: String?
        package var size: Int?
        package var receipt: String?
        package var downloadURL: String?
        package var serverErrorCode: String?
        package var reason: String?

        package init(_ field: RereferenceAssetsRequest.Field, asset: WireAsset) {
            recordName = field.recordName
            fieldName = field.fieldName
            fileChecksum = asset.fileChecksum
            size = asset.size
            receipt = asset.receipt
            downloadURL = asset.downloadURL
        }

        package init(_ field: RereferenceAssetsRequest.Field, error: ShareError) {
            recordName = field.recordName
            fieldName = field.fieldName
            serverErrorCode = WireSpelling.errorCode(error.code)
            reason = WireSpelling.reason(of: error)
        }
    }

    package init(assets: [Entry]) {
        self.assets = assets
    }
}
