import ShareKit

/// One cell of the access matrix: the right a user has to what one share covers, as `AccessRules` decides
/// it, and why (the user's place in the share).
public struct AccessCell: Sendable, Hashable {
    /// The effective right now.
    public var access: AccessRules.Access
    /// The user's participation: nil for the owner and for someone not in the share.
    public var status: AcceptanceStatus?
    /// The access the participation gives once accepted (what a pending invitation promises); nil for the
    /// owner and for someone not in the share.
    public var promised: AccessRules.Access?
    /// The permission the share gives the participant (what a pending participant has once they accept).
    public var permission: Permission?
    public var role: ParticipantRole?

    public init(
        access: AccessRules.Access, status: AcceptanceStatus? = nil, permission: Permission? = nil,
        role: ParticipantRole? = nil, promised: AccessRules.Access? = nil
    ) {
        self.access = access
        self.status = status
        self.promised = promised
        self.permission = permission
        self.role = role
    }

    /// The cell of `user` for `share`.
    public init(user: UserRecordName, share: Share) {
        let access = AccessRules.access(caller: user, zoneOwner: share.zoneID.ownerRecordName, share: share)
        let participant = share.participant(user)
        self.init(
            access: access, status: participant?.acceptance, permission: participant?.permission,
            role: participant?.role, promised: participant.map { AccessRules.access(of: $0, in: share) })
    }

    /// The right as one word: `owner`, `administrator`, `write`, `read` or `none`.
    public var word: String { Self.word(access) }

    /// The right as one word.
    public static func word(_ access: AccessRules.Access) -> String {
        switch access {
        case .owner: "owner"
        case .administrator: "administrator"
        case .readWrite: "write"
        case .readOnly: "read"
        case .none: "none"
        }
    }

    /// What the cell says: the right, with a pending or removed participation marked (`none (pending: read)`,
    /// `none (removed)`), and a right that comes from a public share marked (`read (public)`).
    public var text: String {
        switch status {
        case .pending?: return "\(word) (pending: \(Self.word(promised ?? .none)))"
        case .removed?: return "\(word) (removed)"
        case .accepted? where role == .publicUser: return "\(word) (public)"
        default: return word
        }
    }
}
