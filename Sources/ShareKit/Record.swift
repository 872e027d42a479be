/// When a record was created or changed, and by whom.
public struct Stamp: Sendable, Hashable, Codable {
    /// Milliseconds since 1970.
    public var timestamp: Int64
    public var userRecordName: UserRecordName

    public init(timestamp: Int64, userRecordName: UserRecordName) {
        self.timestamp = timestamp
        self.userRecordName = userRecordName
    }
}

/// A CloudKit record: typed fields in a zone, with an optional parent and a change tag.
public struct Record: Sendable, Hashable, Codable {
    public var recordName: String
    public var recordType: String
    public var zoneID: ZoneID
    public var fields: [String: FieldValue]
    /// The record name of the parent, in the same zone; parent chains make share hierarchies.
    public var parent: String?
    /// Changes on every write; nil for a record not yet saved.
    public var changeTag: String?
    public var created: Stamp?
    public var modified: Stamp?
    /// Set on the root of a hierarchy share: the record name of that share.
    public var shareRecordName: String?

    public init(
        recordName: String, recordType: String, zoneID: ZoneID, fields: [String: FieldValue] = [:],
        parent: String? = nil, changeTag: String? = nil, created: Stamp? = nil, modified: Stamp? = nil,
        shareRecordName: String? = nil
    ) {
        self.recordName = recordName
        self.recordType = recordType
        self.zoneID = zoneID
        self.fields = fields
        self.parent = parent
        self.changeTag = changeTag
        self.created = created
        self.modified = modified
        self.shareRecordName = shareRecordName
    }

    public var id: RecordID { RecordID(recordName: recordName, zoneID: zoneID) }
}

/// A zone as a database lists it.
public struct Zone: Sendable, Hashable, Codable {
    public var zoneID: ZoneID
    /// The record name of the zone-wide share, when the zone is shared as a whole.
    public var shareRecordName: String?

    public init(zoneID: ZoneID, shareRecordName: String? = nil) {
        self.zoneID = zoneID
        self.shareRecordName = shareRecordName
    }
}

/// A person in the container.
public struct User: Sendable, Hashable, Codable {
    public var recordName: UserRecordName
    public var email: String?
    /// The display name, such as `Alice Appleseed`.
    public var name: String?

    public init(recordName: UserRecordName, email: String? = nil, name: String? = nil) {
        self.recordName = recordName
        self.email = email
        self.name = name
    }
}
