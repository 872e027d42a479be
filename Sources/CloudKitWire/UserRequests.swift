import ShareKit

/// A user on the wire, as `users/current` and `users/lookup/email` answer, or a per-user error.
///
/// `emailAddress` on `users/current` and `name` are extensions of sharelane's emulator; Apple's service
/// answers `firstName` / `lastName` and `nameComponents`.
public struct WireUser: Codable, Sendable, Hashable {
    public var userRecordName: String?
    public var firstName: String?
    public var lastName: String?
    public var emailAddress: String?
    public var nameComponents: WireNameComponents?
    public var lookupInfo: WireLookupInfo?
    public var serverErrorCode: String?
    public var reason: String?

    public init(_ user: User) {
        userRecordName = user.recordName
        emailAddress = user.email
        if let name = user.name {
            let components = WireNameComponents(displayName: name)
            nameComponents = components
            firstName = components.givenName
            lastName = components.familyName
        }
    }

    public init(notFound email: String) {
        emailAddress = email
        lookupInfo = WireLookupInfo(emailAddress: email)
        serverErrorCode = ServerErrorCode.notFound.rawValue
        reason = "no user has the email address \(email)"
    }

    /// The user; nil for an error entry or an entry without a record name.
    public var user: User? {
        guard serverErrorCode == nil, let userRecordName else { return nil }
        let name =
            nameComponents?.displayName
            ?? ([firstName, lastName].compactMap { $0 }.isEmpty
                ? nil : [firstName, lastName].compactMap { $0 }.joined(separator: " "))
        return User(recordName: userRecordName, email: emailAddress ?? lookupInfo?.emailAddress, name: name)
    }
}

/// `users/lookup/email`: `{users: [{emailAddress}]}`.
public struct LookupUsersRequest: Codable, Sendable, Hashable {
    public var users: [WireLookupInfo]

    public init(emails: [String]) {
        users = emails.map { WireLookupInfo(emailAddress: $0) }
    }
}

/// The answer to `users/lookup/email`: `{users}`.
public struct UsersResponse: Codable, Sendable, Hashable {
    public var users: [WireUser]

    public init(users: [WireUser]) {
        self.users = users
    }
}

/// The emulator's sign-in: `POST /auth/signin` with `{"emailAddress": …}` (and optionally `name`, and
/// `createUser: false` to sign in only a user the emulator has, answering `NOT_FOUND` otherwise).
public struct SignInRequest: Codable, Sendable, Hashable {
    public var emailAddress: String
    public var name: String?
    /// nil or true: an unknown address becomes a new user; false: it is `NOT_FOUND`.
    public var createUser: Bool?

    public init(emailAddress: String, name: String?, createUser: Bool? = nil) {
        self.emailAddress = emailAddress
        self.name = name
        self.createUser = createUser
    }
}

/// The answer to sign-in: `{ckWebAuthToken, userRecordName}` (plus the user's address and name).
public struct SignInResponse: Codable, Sendable, Hashable {
    public var ckWebAuthToken: String
    public var userRecordName: String
    public var emailAddress: String?
    public var name: String?

    public init(ckWebAuthToken: String, user: User) {
        self.ckWebAuthToken = ckWebAuthToken
        userRecordName = user.recordName
        emailAddress = user.email
        name = user.name
    }
}
