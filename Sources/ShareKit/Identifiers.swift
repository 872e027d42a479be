/// A user's record name in a container, such as `_7d1f0c…`.
public typealias UserRecordName = String

/// The owner name CloudKit uses for the current user's own zones.
public let defaultOwnerName = "__defaultOwner__"

/// The name of every private database's default zone.
public let defaultZoneName = "_defaultZone"

/// The record name of a zone-wide share.
public let zoneShareRecordName = "cloudkit.zoneshare"

/// The record type of every share.
public let shareRecordType = "cloudkit.share"

/// The field of a share record that holds its title.
public let shareTitleField = "cloudkit.title"

/// One of the three databases a user sees in a container.
public enum DatabaseScope: String, Sendable, Hashable, Codable, CaseIterable {
    case `private`
    case shared
    case `public`
}

/// Identifies a zone: its name and the user who owns it.
///
/// In a user's private database the owner is `__defaultOwner__` (or the user's own record name); in the
/// shared database it is the real record name of the user who shared the zone.
public struct ZoneID: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    public var zoneName: String
    public var ownerRecordName: UserRecordName

    public init(zoneName: String, ownerRecordName: UserRecordName = defaultOwnerName) {
        self.zoneName = zoneName
        self.ownerRecordName = ownerRecordName
    }

    /// The private database's default zone.
    public static let defaultZone = ZoneID(zoneName: defaultZoneName)

    /// This zone ID with `__defaultOwner__` replaced by `user`.
    public func resolvingOwner(to user: UserRecordName) -> ZoneID {
        ownerRecordName == defaultOwnerName ? ZoneID(zoneName: zoneName, ownerRecordName: user) : self
    }

    public var description: String {
        ownerRecordName == defaultOwnerName ? zoneName : "\(zoneName) (owner \(ownerRecordName))"
    }

    public static func < (lhs: ZoneID, rhs: ZoneID) -> Bool {
        (lhs.zoneName, lhs.ownerRecordName) < (rhs.zoneName, rhs.ownerRecordName)
    }
}

/// Identifies a record: its name and its zone.
public struct RecordID: Sendable, Hashable, Codable, CustomStringConvertible {
    public var recordName: String
    public var zoneID: ZoneID

    public init(recordName: String, zoneID: ZoneID) {
        self.recordName = recordName
        self.zoneID = zoneID
    }

    public var description: String { "\(zoneID.zoneName)/\(recordName)" }
}

/// An opaque position in a database's or a zone's history, handed back by change requests.
public struct ChangeToken: Sendable, Hashable, Codable, RawRepresentable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}
