import ShareKit

/// A user on the wire, as `users/current` and `users/lookup/email` answer, or a per-user error.
///
/// `emailAddress` on `users/current` and `name` are extensions of sharelane's emulator; Apple's service
/// answers `firstName` / `lastName` and `nameComponents`.
package struct WireUser: Codable, Sendable, Hashable {
    package var userRecordName: String?
    package var firstName: String?
    package var lastName: String?
    package var emailAddress: String?
    package var nameComponents: WireNameComponents?
    package var lookupInfo: WireLookupInfo?
    package var serverErrorCode: String?
    package var reason: String?

    package init(_ user: User) {
        userRecordName = user.recordName
        emailAddress = user.email
        if let name = user.name {
            let components = WireNameComponents(displayName: name)
            nameComponents = components
            firstName = components.givenName
            lastName = components.familyName
        }
    }

    package init(notFound email: String) {
        emailAddress = email
        lookupInfo = WireLookupInfo(emailAddress: email)
        serverErrorCode = WireSpelling.errorCode(.notFound)
        reason = "no user has the email address \(email)"
    }

    /// An address no discoverable user has, as `users/lookup/email` answers it on Apple's service: the user
    /// info with only the address filled, no record name and no error.
    package init(addressOnly email: String) {
        emailAddress = email
        lookupInfo = WireLookupInfo(emailAddress: email)
    }

    /// The user; nil for an error entry or an entry without a record name.
    package var user: User? {
        guard serverErrorCode == nil, let userRecordName else { return nil }
        let name =
            nameComponents?.displayName
            ?? ([firstName, lastName].compactMap { $0 }.isEmpty
                ? nil : [firstName, lastName].compactMap { $0 }.joined(separator: " "))
        return User(recordName: userRecordName, email: emailAddress ?? lookupInfo?.emailAddress, name: name)
    }
}

/// `users/lookup/email`: `{users: [{emailAddress}]}`.
package struct LookupUsersRequest: Codable, Sendable, Hashable {
    package var users: [WireLookupInfo]

    package init(emails: [String]) {
        users = emails.map { WireLookupInfo(emailAddress: $0) }
    }
}

/// The answer to `users/lookup/email`: `{users}`.
package struct UsersResponse: Codable, Sendable, Hashable {
    package var users: [WireUser]

    package init(users: [WireUser]) {
        self.users = users
    }
}

/// The emulator's sign-in: `POST /auth/signin` with `{"emailAddress": …}` (and optionally `name`, and
/// `createUser: false` to sign in only a user the emulator has, answering `NOT_FOUND` otherwise; `container`
/// and `environment` to sign in to that world only, as sharelane's own client does).
package struct SignInRequest: Codable, Sendable, Hashable {
    package var emailAddress: String
    package var name: String?
    /// nil or true: an unknown address becomes a new user; false: it is `NOT_FOUND`.
    package var createUser: Bool?
    /// The world to sign in to; both or neither.
    package var container: String?
    package var environment: String?

    package init(
        emailAddress: String, name: String?, createUser: Bool? = nil, container: String? = nil,
        environment: String? = nil
    ) {
        self.emailAddress = emailAddress
        self.name = name
        self.createUser = createUser
        self.container = container
        self.environment = environment
    }

    /// A sign-in to the endpoint's container and environment: each is a world of its own on the emulator.
    package init(emailAddress: String, name: String?, createUser: Bool? = nil, for endpoint: WebServicesEndpoint) {
        self.init(
            emailAddress: emailAddress, name: name, createUser: createUser, container: endpoint.container,
            environment: endpoint.environment)
    }

    /// The world the request names, or nil for none.
    /// - Throws: `BAD_REQUEST` for one of the two without the other, an unknown environment or a container
    ///   identifier that cannot be one.
    package func world() throws -> StoreWorld? {
        try Self.world(container: container, environment: environment)
    }

    /// The world a sign-in's `container` and `environment` name, or nil for neither.
    static func world(container: String?, environment: String?) throws -> StoreWorld? {
        guard container != nil || environment != nil else { return nil }
        guard let container, let environment else {
            throw ShareError(.badRequest, "sign-in takes container and environment together, or neither")
        }
        guard let parsed = WireSpelling.environment(environment) else {
            throw ShareError(
                .badRequest, "unknown environment \"\(environment)\" in sign-in; expected development or production")
        }
        if let problem = StoreWorld.containerProblem(container) { throw ShareError(.badRequest, problem) }
        return StoreWorld(container: container, environment: parsed)
    }
}

/// The answer to sign-in: `{ckWebAuthToken, userRecordName}` (plus the user's address and name).
package struct SignInResponse: Codable, Sendable, Hashable {
    package var ckWebAuthToken: String
    package var userRecordName: String
    package var emailAddress: String?
    package var name: String?

    package init(ckWebAuthToken: String, user: User) {
        self.ckWebAuthToken = ckWebAuthToken
        userRecordName = user.recordName
        emailAddress = user.email
        name = user.name
    }
}

/// The emulator's sign-in of many users in one request, as sharelane's own client signs in a recipe's users:
/// `POST /auth/signin/batch` with `{users: [{emailAddress, name?}], createUser?, container?, environment?}`,
/// the fields meaning what they mean in `SignInRequest`. An apply of 10,000 new users then sends 50 requests,
/// not 20,000 (a look-up while planning and a sign-in while applying each).
package struct SignInBatchRequest: Codable, Sendable, Hashable {
    package struct Person: Codable, Sendable, Hashable {
        package var emailAddress: String
        package var name: String?

        package init(emailAddress: String, name: String?) {
            self.emailAddress = emailAddress
            self.name = name
        }
    }

    package var users: [Person]
    /// nil or true: an unknown address becomes a new user; false: its entry is `NOT_FOUND`.
    package var createUser: Bool?
    package var container: String?
    package var environment: String?

    /// A sign-in of `users` to the endpoint's container and environment.
    package init(users: [Person], createUser: Bool?, for endpoint: WebServicesEndpoint) {
        self.users = users
        self.createUser = createUser
        container = endpoint.container
        environment = endpoint.environment
    }

    /// The world the request names, or nil for none (as `SignInRequest.world()`).
    package func world() throws -> StoreWorld? {
        try SignInRequest.world(container: container, environment: environment)
    }
}

/// The answer to a batch sign-in: `{users: [entry]}`, one entry a user of the request, in its order. An entry
/// is a sign-in's answer (`ckWebAuthToken`, `userRecordName`, `emailAddress`, `name`) or, for that user
/// alone, `{emailAddress, serverErrorCode, reason}`.
package struct SignInBatchResponse: Codable, Sendable, Hashable {
    package struct Entry: Codable, Sendable, Hashable {
        package var ckWebAuthToken: String?
        package var userRecordName: String?
        package var emailAddress: String?
        package var name: String?
        package var serverErrorCode: String?
        package var reason: String?

        /// A user signed in: the members of a sign-in's answer.
        package init(_ signedIn: SignInResponse) {
            ckWebAuthToken = signedIn.ckWebAuthToken
            userRecordName = signedIn.userRecordName
            emailAddress = signedIn.emailAddress
            name = signedIn.name
        }

        package init(emailAddress: String, error: ShareError) {
            self.emailAddress = emailAddress
            serverErrorCode = WireSpelling.errorCode(error.code)
            reason = WireSpelling.reason(of: error)
        }

        /// The user and their token, or the error the entry carries.
        package func signedIn(email: String) throws -> (user: User, token: String) {
            if let serverErrorCode {
                throw WireError.shareError(code: serverErrorCode, reason: reason, subject: email, retryAfter: nil)
            }
            guard let ckWebAuthToken, let userRecordName else {
                throw ShareError(
                    .internalError, "a batch sign-in answered neither a token nor an error", subject: email)
            }
            return (User(recordName: userRecordName, email: emailAddress ?? email, name: name), ckWebAuthToken)
        }
    }

    package var users: [Entry]

    package init(users: [Entry]) {
        self.users = users
    }
}
