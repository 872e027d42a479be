/// A share as plans and the applier name it: its zone, and the root record of a hierarchy share
/// (`FamilyLists` for a zone-wide share, `Trips/italy` for a hierarchy share).
public struct SharePath: Sendable, Hashable, Codable, CustomStringConvertible {
    public var zoneName: String
    /// nil for a zone-wide share.
    public var rootRecordName: String?

    public init(zoneName: String, rootRecordName: String?) {
        self.zoneName = zoneName
        self.rootRecordName = rootRecordName
    }

    public var description: String { rootRecordName.map { "\(zoneName)/\($0)" } ?? zoneName }
}

extension PlannedShare {
    /// Which share this is.
    public var path: SharePath { SharePath(zoneName: zoneName, rootRecordName: rootRecordName) }
}

extension PlannedValue {
    /// The share whose URL this value is, for `shareURL`.
    public var sharePath: SharePath? {
        guard case .shareURL(let zone, let record) = self else { return nil }
        return SharePath(zoneName: zone, rootRecordName: record)
    }
}
