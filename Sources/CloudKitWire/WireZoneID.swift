import ShareKit

/// A zone ID on the wire: `{zoneName, ownerRecordName?}`; a missing owner means the caller's own zone.
public struct WireZoneID: Codable, Sendable, Hashable {
    public var zoneName: String
    public var ownerRecordName: String?

    public init(_ zoneID: ZoneID) {
        zoneName = zoneID.zoneName
        ownerRecordName = zoneID.ownerRecordName
    }

    public var zoneID: ZoneID {
        ZoneID(zoneName: zoneName, ownerRecordName: ownerRecordName ?? defaultOwnerName)
    }
}

/// A pointer to a record by name, as `parent`, `forRecord` and `records/lookup` write it.
public struct WireRecordPointer: Codable, Sendable, Hashable {
    public var recordName: String
    public var recordChangeTag: String?

    public init(recordName: String, recordChangeTag: String? = nil) {
        self.recordName = recordName
        self.recordChangeTag = recordChangeTag
    }
}

/// The `share` member of a shared root record or zone: the share's record name and zone.
public struct WireShareReference: Codable, Sendable, Hashable {
    public var recordName: String
    public var zoneID: WireZoneID?

    public init(recordName: String, zoneID: ZoneID?) {
        self.recordName = recordName
        self.zoneID = zoneID.map(WireZoneID.init)
    }
}
