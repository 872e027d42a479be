import ShareKit

/// The web auth tokens a `WebServicesStore` holds: one per signed-in user, each replaced by the next one
/// that every response hands out.
actor SessionBook {
    /// Which user a session belongs to and how to sign in again.
    struct Session: Sendable {
        var key: String
        var email: String?
        var name: String?
        var gate: SerialGate
    }

    private static let cloudKitKey = "cloudkit:signed-in-user"
    private var sessions: [String: Session] = [:]
    private var tokens: [String: String] = [:]
    private(set) var cloudKitUser: User?

    init(cloudKitToken: String?) {
        let gate = SerialGate()
        sessions[Self.cloudKitKey] = Session(key: Self.cloudKitKey, email: nil, name: nil, gate: gate)
        if let cloudKitToken { tokens[Self.cloudKitKey] = cloudKitToken }
    }

    func signedIn(_ user: User, token: String) {
        if sessions[user.recordName] == nil {
            sessions[user.recordName] = Session(
                key: user.recordName, email: user.email, name: user.name, gate: SerialGate())
        }
        tokens[user.recordName] = token
    }

    func setCloudKitUser(_ user: User) {
        cloudKitUser = user
    }

    func token(of key: String) -> String? { tokens[key] }

    func rotate(_ key: String, to token: String) {
        tokens[key] = token
    }

    /// The session to send a request as `user` with.
    /// - Throws: `ShareError` when the store cannot act as that user.
    func session(for user: UserRecordName?, kind: WebServicesEndpoint.Kind, displayName: String) throws -> Session {
        switch kind {
        case .emulator:
            guard let user, let session = sessions[user] else {
                throw ShareError(
                    .authenticationRequired,
                    "\(displayName) has no web auth token for user \(user ?? "(none)"): sign in as that user "
                        + "(by email address) before acting as them", subject: user)
            }
            return session
        case .cloudKit:
            if let user, let signedIn = cloudKitUser, user != signedIn.recordName, user != defaultOwnerName {
                throw ShareError(
                    .authenticationFailed,
                    "\(displayName) acts only as the user signed in with CLOUDKIT_WEB_AUTH_TOKEN "
                        + "(\(signedIn.recordName)), not as \(user)", subject: user)
            }
            guard tokens[Self.cloudKitKey] != nil else {
                throw ShareError(
                    .authenticationRequired,
                    "\(displayName) needs CLOUDKIT_WEB_AUTH_TOKEN (with CLOUDKIT_API_TOKEN) for the private and "
                        + "shared databases; a server-to-server key reaches the public database only. See "
                        + "Docs/CloudKit.md for getting a web auth token")
            }
            return sessions[Self.cloudKitKey] ?? Session(key: Self.cloudKitKey, gate: SerialGate())
        }
    }
}
