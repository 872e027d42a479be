import ShareKit

/// The live state a plan was computed from: for every zone it read, whether the zone existed and the change
/// tag of every record and share in it; for the public database, the tags of the records it looked up.
///
/// A saved plan is applied only when the store still matches its basis.
public struct LiveBasis: Sendable, Hashable, Codable {
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
public struct ZoneBasis: Sendable {
    public var zoneName: String
    public var exists: Bool
    /// Every record and share in the zone, by record name: its change tag (unpacked when first read).
    public var tags: [String: String] {
        get { storedTags.dictionary }
        set { storedTags = ChangeTags(newValue) }
    }
    private var storedTags: ChangeTags
    /// The live records the plan neither declares nor writes (kept, `--prune` aside): a saved plan passes over
    /// their changes, and over records created since that it does not write. nil when the plan depends on the
    /// whole zone (it prunes or deletes it, or was made without the recipe's records), and in older plans.
    ///
    /// Not part of equality: it is the plan's reading of the basis, not the live state, and a plan made from
    /// the cache (whose recipe's records were not loaded) leaves it nil while reading the same state.
    public var undeclared: [String]?

    public init(zoneName: String, exists: Bool, tags: [String: String] = [:]) {
        self.zoneName = zoneName
        self.exists = exists
        storedTags = ChangeTags(tags)
    }

    package init(zoneName: String, exists: Bool, tags: ChangeTags) {
        self.zoneName = zoneName
        self.exists = exists
        storedTags = tags
    }
}

// MARK: - Hashable

extension ZoneBasis: Hashable {
    public static func == (a: ZoneBasis, b: ZoneBasis) -> Bool {
        a.zoneName == b.zoneName && a.exists == b.exists && a.tags == b.tags
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(zoneName)
        hasher.combine(exists)
        hasher.combine(tags)
    }
}

// MARK: - Codable

extension ZoneBasis: Codable {
    enum CodingKeys: String, CodingKey { case zoneName, exists, tags, undeclared }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            zoneName: try container.decode(String.self, forKey: .zoneName),
            exists: try container.decode(Bool.self, forKey: .exists),
            tags: try container.decode([String: String].self, forKey: .tags))
        undeclared = try container.decodeIfPresent([String].self, forKey: .undeclared)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(zoneName, forKey: .zoneName)
        try container.encode(exists, forKey: .exists)
        try container.encode(tags, forKey: .tags)
        try container.encodeIfPresent(undeclared, forKey: .undeclared)
    }
}
