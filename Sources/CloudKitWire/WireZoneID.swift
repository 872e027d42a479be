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
