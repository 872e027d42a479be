/// What a participant, or anyone holding a share's URL, may do with the shared records.
public enum Permission: String, Sendable, Hashable, Codable, CaseIterable {
    case none = "NONE"
    case readOnly = "READ_ONLY"
    case readWrite = "READ_WRITE"

    /// The word recipes use: `none`, `read-only`, `read-write`.
    public var recipeName: String {
        switch self {
        case .none: "none"
        case .readOnly: "read-only"
        case .readWrite: "read-write"
        }
    }

    /// Parses a recipe word (`read-only`); the wire's words are `WireSpelling`'s.
    public init?(recipeName: String) {
        guard let p = Permission.allCases.first(where: { $0.recipeName == recipeName }) else { return nil }
        self = p
    }
}

/// A participant's role in a share.
public enum ParticipantRole: String, Sendable, Hashable, Codable, CaseIterable {
    case owner = "OWNER"
    case administrator = "ADMINISTRATOR"
    case privateUser = "USER"
    case publicUser = "PUBLIC_USER"

    /// The word recipes use: `owner`, `administrator`, `private-user`, `public-user`.
    public var recipeName: String {
        switch self {
        case .owner: "owner"
        case .administrator: "administrator"
        case .privateUser: "private-user"
        case .publicUser: "public-user"
        }
    }

    /// Parses a recipe word (`administrator`); the wire's words are `WireSpelling`'s.
    public init?(recipeName: String) {
        guard let r = ParticipantRole.allCases.first(where: { $0.recipeName == recipeName }) else { return nil }
        self = r
    }
}

/// Whether a participant has accepted a share.
public enum AcceptanceStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case pending = "INVITED"
    case accepted = "ACCEPTED"
    case removed = "REMOVED"

    /// The word recipes and `show` use: `pending`, `accepted`, `removed`.
    public var recipeName: String {
        switch self {
        case .pending: "pending"
        case .accepted: "accepted"
        case .removed: "removed"
        }
    }

    /// Parses a recipe word (`pending`); the wire's words are `WireSpelling`'s.
    public init?(recipeName: String) {
        guard let s = AcceptanceStatus.allCases.first(where: { $0.recipeName == recipeName }) else { return nil }
        self = s
    }
}
