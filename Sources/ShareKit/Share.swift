/// Someone a share is shared with (the owner is not listed among a share's participants).
public struct Participant: Sendable, Hashable, Codable {
    public var participantID: String?
    public var userRecordName: UserRecordName
    public var email: String?
    public var name: String?
    public var role: ParticipantRole
    public var permission: Permission
    public var acceptance: AcceptanceStatus
    /// The phone number a participant was invited by (`lookupInfo.phoneNumber`), when neither a record name
    /// nor an email address named them; the store resolves it to the user who has it.
    public var phone: String?

    public init(
        participantID: String? = nil, userRecordName: UserRecordName, email: String? = nil, name: String? = nil,
        role: ParticipantRole = .privateUser, permission: Permission = .readOnly,
        acceptance: AcceptanceStatus = .pending, phone: String? = nil
    ) {
        self.participantID = participantID
        self.userRecordName = userRecordName
        self.email = email
        self.name = name
        self.role = role
        self.permission = permission
        self.acceptance = acceptance
        self.phone = phone
    }
}

/// A share: a whole zone (record name `cloudkit.zoneshare`) or a record hierarchy rooted at one record.
public struct Share: Sendable, Hashable, Codable {
    /// `cloudkit.zoneshare` for a zone-wide share; the store names a hierarchy share.
    public var recordName: String
    public var zoneID: ZoneID
    /// The root record of a hierarchy share; nil for a zone-wide share.
    public var rootRecordName: String?
    public var title: String?
    public var publicPermission: Permission
    public var ownerRecordName: UserRecordName
    /// Everyone but the owner, in the order they were added.
    public var participants: [Participant]
    /// Changes on every write; nil for a share not yet saved.
    public var changeTag: String?
    /// The short GUID in the share's URL, handed out by the store.
    public var shortGUID: String?
    /// The URL a participant opens to accept, handed out by the store.
    public var url: String?
    /// When and by whom the store saved the share first, and last (an acceptance or a departure is a save):
    /// a share record carries them as every record does. Nil for a share not yet saved, and for one a store
    /// saved before it kept them.
    public var created: Stamp?
    public var modified: Stamp?

    public init(
        recordName: String, zoneID: ZoneID, rootRecordName: String? = nil, title: String? = nil,
        publicPermission: Permission = .none, ownerRecordName: UserRecordName = defaultOwnerName,
        participants: [Participant] = [], changeTag: String? = nil, shortGUID: String? = nil, url: String? = nil,
        created: Stamp? = nil, modified: Stamp? = nil
    ) {
        self.recordName = recordName
        self.zoneID = zoneID
        self.rootRecordName = rootRecordName
        self.title = title
        self.publicPermission = publicPermission
        self.ownerRecordName = ownerRecordName
        self.participants = participants
        self.changeTag = changeTag
        self.shortGUID = shortGUID
        self.url = url
        self.created = created
        self.modified = modified
    }

    /// A new zone-wide share of `zoneID`.
    public static func zoneWide(_ zoneID: ZoneID, title: String? = nil, publicPermission: Permission = .none) -> Share {
        Share(recordName: zoneShareRecordName, zoneID: zoneID, title: title, publicPermission: publicPermission)
    }

    public var isZoneWide: Bool { rootRecordName == nil }

    /// The permission `participant` has in this share: a public user's is the share's `publicPermission`,
    /// whatever their entry says (one source: an entry's copy would go stale when the owner changes the public
    /// permission after they joined); anyone else's is their entry's.
    public func permission(of participant: Participant) -> Permission {
        participant.role == .publicUser ? publicPermission : participant.permission
    }

    /// The participant entry of `user`, if any.
    public func participant(_ user: UserRecordName) -> Participant? {
        participants.first { $0.userRecordName == user }
    }
}

/// What a user learns about a share from its URL before accepting it (`records/resolve`).
public struct ShareMetadata: Sendable, Hashable, Codable {
    public var share: Share
    /// The zone as the share's owner names it, with the owner's real record name.
    public var zoneID: ZoneID
    public var rootRecordName: String?
    /// The caller's own entry: a participant's, or the owner's (`owner`) when the caller owns the share, as
    /// CloudKit answers the owner's own share (OWNER, ACCEPTED, READ_WRITE).
    public var participant: Participant?
    /// The owner as a participant (OWNER, ACCEPTED, READ_WRITE) with the address and name the store knows of
    /// them; nil where the store does not say.
    public var owner: Participant?

    public init(
        share: Share, zoneID: ZoneID, rootRecordName: String?, participant: Participant?, owner: Participant? = nil
    ) {
        self.share = share
        self.zoneID = zoneID
        self.rootRecordName = rootRecordName
        self.participant = participant
        self.owner = owner
    }

    /// The metadata `user` is answered for `share`, whose owner is `owner` (their address and name as the
    /// store knows them): the caller's entry is their own participant's, or the owner's when they own it.
    public init(share: Share, as user: UserRecordName, ownerEmail: String?, ownerName: String?) {
        let owner = Participant(
            userRecordName: share.ownerRecordName, email: ownerEmail, name: ownerName, role: .owner,
            permission: .readWrite, acceptance: .accepted)
        self.init(
            share: share, zoneID: share.zoneID, rootRecordName: share.rootRecordName,
            participant: share.participant(user) ?? (user == share.ownerRecordName ? owner : nil), owner: owner)
    }
}
