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

    /// Parses a recipe word (`read-only`) or a Web Services word (`READ_ONLY`).
    public init?(name: String) {
        if let p = Permission(rawValue: name) {
            self = p
        } else if let p = Permission.allCases.first(where: { $0.recipeName == name }) {
            self = p
        } else {
            return nil
        }
    }
}

/// A participant's role in a share.
public enum ParticipantRole: String, Sendable, Hashable, Codable, CaseIterable {
    case owner = "OWNER"
    case administrator = "ADMINISTRATOR"
    /// Web Services writes `USER`; CloudKit JS writes `PRIVATE_USER`.
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

    /// Parses a recipe word or either wire spelling (`USER`, `PRIVATE_USER`).
    public init?(name: String) {
        if name == "PRIVATE_USER" {
            self = .privateUser
        } else if let r = ParticipantRole(rawValue: name) {
            self = r
        } else if let r = ParticipantRole.allCases.first(where: { $0.recipeName == name }) {
            self = r
        } else {
            return nil
        }
    }
}

/// Whether a participant has accepted a share.
public enum AcceptanceStatus: String, Sendable, Hashable, Codable, CaseIterable {
    /// Web Services writes `INVITED`; CloudKit JS writes `PENDING`.
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

    /// Parses a recipe word or either wire spelling (`INVITED`, `PENDING`).
    public init?(name: String) {
        if name == "PENDING" {
            self = .pending
        } else if let s = AcceptanceStatus(rawValue: name) {
            self = s
        } else if let s = AcceptanceStatus.allCases.first(where: { $0.recipeName == name }) {
            self = s
        } else {
            return nil
        }
    }
}
