import ShareKit

/// A share as the plan wants it after apply: its properties and its complete participant list.
public struct PlannedShare: Sendable, Hashable, Codable {
    /// The live share's record name; nil for a share not yet created.
    public var recordName: String?
    public var zoneName: String
    /// The root record of a hierarchy share; nil for a zone-wide share.
    public var rootRecordName: String?
    public var title: String?
    public var publicPermission: Permission
    public var participants: [PlannedParticipant]
    /// The live share's URL, when the share exists.
    public var url: String?
    /// The live share's change tag, when the share exists.
    public var baseChangeTag: String?
    /// For a share to create with `stable_url: true`, the short GUID derived from the recipe; nil lets the
    /// store make a random one.
    public var proposedShortGUID: String?

    public init(
        recordName: String?, zoneName: String, rootRecordName: String?, title: String?,
        publicPermission: Permission, participants: [PlannedParticipant], url: String? = nil,
        baseChangeTag: String? = nil, proposedShortGUID: String? = nil
    ) {
        self.proposedShortGUID = proposedShortGUID
        self.recordName = recordName
        self.zoneName = zoneName
        self.rootRecordName = rootRecordName
        self.title = title
        self.publicPermission = publicPermission
        self.participants = participants
        self.url = url
        self.baseChangeTag = baseChangeTag
    }
}

/// A participant of a planned share.
public struct PlannedParticipant: Sendable, Hashable, Codable {
    /// The recipe's handle for the user (`bob`); for a live participant the recipe does not name, the best
    /// name known (email or user record name).
    public var handle: String
    public var userRecordName: UserRecordName
    public var email: String?
    public var name: String?
    public var participantID: String?
    public var permission: Permission
    public var role: ParticipantRole
    /// The live acceptance status; `pending` for a participant being added.
    public var acceptance: AcceptanceStatus
    /// Whether the applier accepts the share as this user after saving it.
    public var accept: Bool

    public init(
        handle: String, userRecordName: UserRecordName, email: String? = nil, name: String? = nil,
        participantID: String? = nil, permission: Permission, role: ParticipantRole,
        acceptance: AcceptanceStatus = .pending, accept: Bool = false
    ) {
        self.handle = handle
        self.userRecordName = userRecordName
        self.email = email
        self.name = name
        self.participantID = participantID
        self.permission = permission
        self.role = role
        self.acceptance = acceptance
        self.accept = accept
    }
}
