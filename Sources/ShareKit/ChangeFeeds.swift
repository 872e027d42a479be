/// What changed in a database since a token (`changes/database`).
public struct DatabaseChanges: Sendable, Hashable, Codable {
    /// Zones that were created, changed, or that hold changed records.
    public var changedZones: [ZoneID]
    public var deletedZones: [ZoneID]
    public var token: ChangeToken
    public var moreComing: Bool

    public init(changedZones: [ZoneID], deletedZones: [ZoneID], token: ChangeToken, moreComing: Bool) {
        self.changedZones = changedZones
        self.deletedZones = deletedZones
        self.token = token
        self.moreComing = moreComing
    }
}

/// What changed in a zone since a token (`changes/zone`).
public struct ZoneChanges: Sendable, Hashable, Codable {
    public var zoneID: ZoneID
    /// Records created or changed, oldest change first, in their current state.
    public var changedRecords: [Record]
    /// Shares created or changed in the zone.
    public var changedShares: [Share]
    /// Record names (records and shares) deleted since the token.
    public var deletedRecordNames: [String]
    public var token: ChangeToken
    public var moreComing: Bool

    public init(
        zoneID: ZoneID, changedRecords: [Record], changedShares: [Share], deletedRecordNames: [String],
        token: ChangeToken, moreComing: Bool
    ) {
        self.zoneID = zoneID
        self.changedRecords = changedRecords
        self.changedShares = changedShares
        self.deletedRecordNames = deletedRecordNames
        self.token = token
        self.moreComing = moreComing
    }
}
