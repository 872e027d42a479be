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
