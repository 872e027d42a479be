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
    public var share: PlannedShare?
    /// The participant this change is about (participant changes).
    public var participant: PlannedParticipant?
    /// The change tag of the live record or share this change was computed from; nil for a create.
    public var baseChangeTag: String?
    /// For a zone deletion, the number of live records it deletes with the zone.
    public var deletedRecordCount: Int?
    /// true for a participant change that only accepts the share as the participant: the share itself is
    /// not saved for it. nil otherwise (absent from saved plans).
    public var onlyAccepts: Bool?
    /// The subscription this change is about (subscription changes): what it becomes, or what it was for a
    /// deletion.
    public var subscription: PlannedSubscription?

    public init(
        action: Action, kind: Kind, address: String, database: DatabaseScope = .private, zoneName: String,
        recordName: String? = nil, attributes: [AttributeChange] = [], record: PlannedRecord? = nil,
        share: PlannedShare? = nil, participant: PlannedParticipant? = nil, baseChangeTag: String? = nil,
        deletedRecordCount: Int? = nil, onlyAccepts: Bool? = nil, subscription: PlannedSubscription? = nil
    ) {
        self.subscription = subscription
        self.action = action
        self.kind = kind
        self.address = address
        self.database = database
        self.zoneName = zoneName
        self.recordName = recordName
        self.attributes = attributes
        self.record = record
        self.share = share
        self.participant = participant
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
