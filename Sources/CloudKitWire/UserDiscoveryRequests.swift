import ShareKit

/// `users/discover`: `{lookupInfos: [{emailAddress | phoneNumber | userRecordName}]}`.
package struct DiscoverUsersRequest: Codable, Sendable, Hashable {
    package var lookupInfos: [WireLookupInfo]

    package init(_ lookups: [UserLookup]) {
        lookupInfos = lookups.map(WireLookupInfo.init)
    }
}

/// The answer to `users/discover` and `users/caller`'s identity: `{users: [{userRecordName?, lookupInfo,
/// nameComponents?}]}`.
package struct UserIdentitiesResponse: Codable, Sendable, Hashable {
    package var users: [WireUserIdentity]

    package init(users: [WireUserIdentity]) {
        self.users = users
    }
}

/// The emulator's settings of a user, beside sign-in: `POST /auth/signin` also takes `phoneNumber` and
/// `discoverable` (see `SignInRequest`); this is the body of `users/settings`, the emulator's own operation
/// for a signed-in user to set them.
package struct UserSettingsRequest: Codable, Sendable, Hashable {
    package var phoneNumber: String?
    package var discoverable: Bool

    package init(_ settings: UserDiscoverability) {
        phoneNumber = settings.phone
        discoverable = settings.discoverable
    }

    package var settings: UserDiscoverability { UserDiscoverability(phone: phoneNumber, discoverable: discoverable) }
}

extension WireLookupInfo {
    package init(_ lookup: UserLookup) {
        switch lookup {
        case .email(let email): self.init(emailAddress: email)
        case .phone(let phone): self.init(phoneNumber: phone)
        case .recordName(let name): self.init(userRecordName: name)
        }
    }

    /// The lookup this names: the first of email address, phone number and user record name; nil for none.
    package var lookup: UserLookup? {
        if let emailAddress { return .email(emailAddress) }
        if let phoneNumber { return .phone(phoneNumber) }
        if let userRecordName { return .recordName(userRecordName) }
        return nil
    }
}

extension WireUserIdentity {
    package init(_ identity: UserIdentity) {
        self.init(userRecordName: identity.userRecordName, email: nil, name: identity.name)
        lookupInfo = WireLookupInfo(identity.lookup)
    }

    /// The identity, for the lookup it answers.
    package func identity(for lookup: UserLookup) -> UserIdentity {
        UserIdentity(lookup: lookup, userRecordName: userRecordName, name: nameComponents?.displayName)
    }
}

extension WireUser {
    /// A `users/lookup/…` entry: the discoverable user a lookup found, or `NOT_FOUND` with the lookup (a user
    /// who is not discoverable answers the same as one who does not exist).
    package init(_ identity: UserIdentity) {
        if let name = identity.userRecordName {
            self.init(User(recordName: name, email: nil, name: identity.name))
        } else {
            self.init(notFound: "")
            emailAddress = nil
            serverErrorCode = WireSpelling.errorCode(.notFound)
            reason = "no discoverable user has the \(identity.lookup.kindName) \(identity.lookup)"
        }
        lookupInfo = WireLookupInfo(identity.lookup)
        if case .email(let email) = identity.lookup { emailAddress = email }
    }
}

extension UserLookup {
    /// `email address`, `phone number`, `user record name`.
    package var kindName: String {
        switch self {
        case .email: "email address"
        case .phone: "phone number"
        case .recordName: "user record name"
        }
    }
}

/// `users/lookup/phone` and `users/lookup/id`: `{users: [{phoneNumber}]}`, `{users: [{userRecordName}]}`.
package struct LookupInfosRequest: Codable, Sendable, Hashable {
    package var users: [WireLookupInfo]

    package init(_ lookups: [UserLookup]) {
        users = lookups.map(WireLookupInfo.init)
    }
}
