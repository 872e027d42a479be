import ShareKit

/// A zone ID on the wire: `{zoneName, ownerRecordName?}`; a missing owner means the caller's own zone.
package struct WireZoneID: Codable, Sendable, Hashable {
    package var zoneName: String
    package var ownerRecordName: String?

    package init(_ zoneID: ZoneID) {
        zoneName = zoneID.zoneName
        ownerRecordName = zoneID.ownerRecordName
    }

    package var zoneID: ZoneID {
        ZoneID(zoneName: zoneName, ownerRecordName: ownerRecordName ?? defaultOwnerName)
    }

    /// Who "my own zone" is while an answer is written: serve sets it for each request (the caller in the
    /// private database), so that every zone ID it answers names the zone's real owner and its type; nil while
    /// a request to the live service is written.
    @TaskLocal package static var answeringFor: UserRecordName?

    /// This zone ID with `__defaultOwner__` (or no owner) read as `owner`'s zone; an owner already named stays.
    package func owned(by owner: UserRecordName) -> WireZoneID {
        var zone = self
        if ownerRecordName == nil || ownerRecordName == defaultOwnerName { zone.ownerRecordName = owner }
        return zone
    }

    /// The zone ID as an answer writes it, with its `zoneType`: Apple's service names the zone's real owner,
    /// never `__defaultOwner__` (a placeholder clients send for "my own zone", read in requests as before), and
    /// says whether the zone is a default zone or one a user made. Outside an answer, as it is, with no type.
    package var written: (zoneID: WireZoneID, zoneType: String?) {
        guard let caller = Self.answeringFor else { return (self, nil) }
        let type = zoneName == defaultZoneName ? "DEFAULT_ZONE" : "REGULAR_CUSTOM_ZONE"
        return (owned(by: caller), type)
    }

    private enum CodingKeys: String, CodingKey {
        case zoneName, ownerRecordName, zoneType
    }

    /// Whether the zone IDs being read are all the reader's own (an answer of the private or public database):
    /// their owner is then read as `__defaultOwner__`, whichever name the answer gives.
    @TaskLocal package static var readingOwnZones = false

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        zoneName = try container.decode(String.self, forKey: .zoneName)
        let owner = try container.decodeIfPresent(String.self, forKey: .ownerRecordName)
        ownerRecordName = Self.readingOwnZones && owner != nil ? defaultOwnerName : owner
    }

    package func encode(to encoder: any Encoder) throws {
        let (zone, type) = written
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(zone.zoneName, forKey: .zoneName)
        try container.encodeIfPresent(zone.ownerRecordName, forKey: .ownerRecordName)
        try container.encodeIfPresent(type, forKey: .zoneType)
    }
}

/// A pointer to a record by name, as `parent`, `forRecord` and `records/lookup` write it.
package struct WireRecordPointer: Codable, Sendable, Hashable {
    package var recordName: String
    package var recordChangeTag: String?

    package init(recordName: String, recordChangeTag: String? = nil) {
        self.recordName = recordName
        self.recordChangeTag = recordChangeTag
    }
}

/// The `share` member of a shared root record or zone: the share's record name and zone.
package struct WireShareReference: Codable, Sendable, Hashable {
    package var recordName: String
    package var zoneID: WireZoneID?

    package init(recordName: String, zoneID: ZoneID?) {
        self.recordName = recordName
        self.zoneID = zoneID.map(WireZoneID.init)
    }
}

/// A record's `created` or `modified`: `{timestamp, userRecordName, deviceID}`, as the reference's Record
/// Dictionary has them. Every one serve writes carries `deviceID` (`WireSpelling.deviceID`); one read without
/// it is taken.
package struct WireStamp: Codable, Sendable, Hashable {
    package var timestamp: Int64
    package var userRecordName: String
    package var deviceID: String?

    package init(_ stamp: Stamp, deviceID: String? = WireSpelling.deviceID) {
        timestamp = stamp.timestamp
        userRecordName = stamp.userRecordName
        self.deviceID = deviceID
    }

    package var stamp: Stamp { Stamp(timestamp: timestamp, userRecordName: userRecordName) }
}
