import ShareKit

/// The live state a plan was computed from: for every zone it read, whether the zone existed and the change
/// tag of every record and share in it; for the public database, the tags of the records it looked up.
///
/// A saved plan is applied only when the store still matches its basis.
public struct PlanBasis: Sendable, Hashable, Codable {
    public var zones: [ZoneBasis]
    /// Public records the plan looked up, by record name: their change tag, or absent from the map when
    /// they did not exist.
    public var publicRecordNames: [String]
    public var publicTags: [String: String]

    public init(zones: [ZoneBasis] = [], publicRecordNames: [String] = [], publicTags: [String: String] = [:]) {
        self.zones = zones
        self.publicRecordNames = publicRecordNames
        self.publicTags = publicTags
    }
}

/// One zone of a plan's basis.
public struct ZoneBasis: Sendable, Hashable, Codable {
    public var zoneName: String
    public var exists: Bool
    /// Every record and share in the zone, by record name: its change tag.
    public var tags: [String: String]

    public init(zoneName: String, exists: Bool, tags: [String: String] = [:]) {
        self.zoneName = zoneName
        self.exists = exists
        self.tags = tags
    }
}
