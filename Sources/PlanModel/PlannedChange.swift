import ShareKit

/// One change of a plan: what it does, to what, attribute by attribute, and what the applier needs to do it.
public struct PlannedChange: Sendable, Hashable, Codable {
    /// What the change does.
    public enum Action: String, Sendable, Hashable, Codable, CaseIterable {
        case create, update, delete
    }

    /// What the change is about.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case zone, record, share, participant, subscription
    }

    public var action: Action
    public var kind: Kind
    /// `zone FamilyLists`, `record FamilyLists/groceries`, `share FamilyLists`, `share Trips/italy`,
    /// `participant FamilyLists/bob`, `record (public)/alice-card`, `subscription alice/private/all-changes`.
    public var address: String
    /// `private` for the owner's zones, `public` for the public database's records; a subscription's database.
    public var database: DatabaseScope
    /// The zone; `_defaultZone` for public records; the zone a subscription watches, or empty.
    public var zoneName: String
    /// The record's name (record changes), the share's root record (hierarchy shares and their
    /// participants), nil otherwise.
    public var recordName: String?
    /// Field-level and property-level before → after, in a stable order.
    public var attributes: [AttributeChange]
    /// What the record becomes (record creates and updates).
    public var record: PlannedRecord?
    /// What the share becomes, complete with its participants (share and participant creates and updates).
    public var share: PlannedShare? {
        get { rare?.share }
        set { rare = Rare.make(share: newValue, participant: participant, subscription: subscription) }
    }
    /// The participant this change is about (participant changes).
    public var participant: PlannedParticipant? {
        get { rare?.participant }
        set { rare = Rare.make(share: share, participant: newValue, subscription: subscription) }
    }
    /// The change tag of the live record or share this change was computed from; nil for a create.
    public var baseChangeTag: String?
    /// For a zone deletion, the number of live records it deletes with the zone.
    public var deletedRecordCount: Int?
    /// true for a participant change that only accepts the share as the participant: the share itself is
    /// not saved for it. nil otherwise (absent from saved plans).
    public var onlyAccepts: Bool?
    /// The subscription this change is about (subscription changes): what it becomes, or what it was for a
    /// deletion.
    public var subscription: PlannedSubscription? {
        get { rare?.subscription }
        set { rare = Rare.make(share: share, participant: participant, subscription: newValue) }
    }
    /// The share, participant and subscription, which record changes (nearly all of a large plan) do not
    /// have, kept out of line: inline they made every change about 300 bytes larger, 30 MB of a plan of
    /// 100,000 records, and the apply's peak memory.
    private var rare: Rare?

    public init(
        action: Action, kind: Kind, address: String, database: DatabaseScope = .private, zoneName: String,
        recordName: String? = nil, attributes: [AttributeChange] = [], record: PlannedRecord? = nil,
        share: PlannedShare? = nil, participant: PlannedParticipant? = nil, baseChangeTag: String? = nil,
        deletedRecordCount: Int? = nil, onlyAccepts: Bool? = nil, subscription: PlannedSubscription? = nil
    ) {
        self.action = action
        self.kind = kind
        self.address = address
        self.database = database
        self.zoneName = zoneName
        self.recordName = recordName
        self.attributes = attributes
        self.record = record
        self.rare = Rare.make(share: share, participant: participant, subscription: subscription)
        self.baseChangeTag = baseChangeTag
        self.deletedRecordCount = deletedRecordCount
        self.onlyAccepts = onlyAccepts
    }

    /// The symbol the text renderer prints: `+`, `~` or `-`.
    public var symbol: String {
        switch action {
        case .create: "+"
        case .update: "~"
        case .delete: "-"
        }
    }
}

// MARK: - Out-of-line parts

extension PlannedChange {
    /// An immutable box: a change is a value, so setting a part makes a new box.
    final class Rare: Sendable, Hashable {
        let share: PlannedShare?
        let participant: PlannedParticipant?
        let subscription: PlannedSubscription?

        private init(share: PlannedShare?, participant: PlannedParticipant?, subscription: PlannedSubscription?) {
            self.share = share
            self.participant = participant
            self.subscription = subscription
        }

        /// A box of these parts, or nil when there are none.
        static func make(share: PlannedShare?, participant: PlannedParticipant?, subscription: PlannedSubscription?)
            -> Rare?
        {
            if share == nil && participant == nil && subscription == nil { return nil }
            return Rare(share: share, participant: participant, subscription: subscription)
        }

        static func == (lhs: Rare, rhs: Rare) -> Bool {
            lhs.share == rhs.share && lhs.participant == rhs.participant && lhs.subscription == rhs.subscription
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(share)
            hasher.combine(participant)
            hasher.combine(subscription)
        }
    }
}

// MARK: - Codable

extension PlannedChange {
    // The keys and their order as the compiler's own conformance wrote them before the out-of-line parts:
    // saved plans and their digests are unchanged.
    private enum CodingKeys: String, CodingKey {
        case action, kind, address, database, zoneName, recordName, attributes, record, share, participant
        case baseChangeTag, deletedRecordCount, onlyAccepts, subscription
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            action: try c.decode(Action.self, forKey: .action), kind: try c.decode(Kind.self, forKey: .kind),
            address: try c.decode(String.self, forKey: .address),
            database: try c.decode(DatabaseScope.self, forKey: .database),
            zoneName: try c.decode(String.self, forKey: .zoneName),
            recordName: try c.decodeIfPresent(String.self, forKey: .recordName),
            attributes: try c.decode([AttributeChange].self, forKey: .attributes),
            record: try c.decodeIfPresent(PlannedRecord.self, forKey: .record),
            share: try c.decodeIfPresent(PlannedShare.self, forKey: .share),
            participant: try c.decodeIfPresent(PlannedParticipant.self, forKey: .participant),
            baseChangeTag: try c.decodeIfPresent(String.self, forKey: .baseChangeTag),
            deletedRecordCount: try c.decodeIfPresent(Int.self, forKey: .deletedRecordCount),
            onlyAccepts: try c.decodeIfPresent(Bool.self, forKey: .onlyAccepts),
            subscription: try c.decodeIfPresent(PlannedSubscription.self, forKey: .subscription))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(action, forKey: .action)
        try c.encode(kind, forKey: .kind)
        try c.encode(address, forKey: .address)
        try c.encode(database, forKey: .database)
        try c.encode(zoneName, forKey: .zoneName)
        try c.encodeIfPresent(recordName, forKey: .recordName)
        try c.encode(attributes, forKey: .attributes)
        try c.encodeIfPresent(record, forKey: .record)
        try c.encodeIfPresent(share, forKey: .share)
        try c.encodeIfPresent(participant, forKey: .participant)
        try c.encodeIfPresent(baseChangeTag, forKey: .baseChangeTag)
        try c.encodeIfPresent(deletedRecordCount, forKey: .deletedRecordCount)
        try c.encodeIfPresent(onlyAccepts, forKey: .onlyAccepts)
        try c.encodeIfPresent(subscription, forKey: .subscription)
    }
}
