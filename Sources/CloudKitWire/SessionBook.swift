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
    /// How many token chains the emulator's store keeps per user: each sign-in starts one, and requests on
    /// different chains can be under way at once (requests on one chain go one after another, as each
    /// needs the token the previous answer handed out). The store's parallelism, so that `--parallelism N`
    /// writes N of one owner's zones at once.
    let chainsPerUser: Int
    private var sessions: [String: Session] = [:]
    private var tokens: [String: String] = [:]
    /// Per user of the emulator, the keys of their sessions; the first is the user record name.
    private var pools: [UserRecordName: [String]] = [:]
    /// Requests under way per session key, and sign-ins under way per user for new sessions.
    private var inFlight: [String: Int] = [:]
    private var growing: [UserRecordName: Int] = [:]
    private(set) var cloudKitUser: User?
    /// `cloudkit:`: the normalized email address of the signed-in user, when known.
    let cloudKitEmail: String?
    /// `cloudkit:`: the session key of each other user with a token of their own, by `cloudkit:EMAIL` and, once
    /// `users/current` named them, by user record name.
    private var cloudKitKeys: [String: String] = [:]

    init(
        cloudKitToken: String?, chainsPerUser: Int, cloudKitEmail: String? = nil,
        otherCloudKitTokens: [String: String] = [:]
    ) {
        self.chainsPerUser = max(1, chainsPerUser)
        self.cloudKitEmail = cloudKitEmail.map(EmailAddress.normalized)
        let gate = SerialGate()
        sessions[Self.cloudKitKey] = Session(key: Self.cloudKitKey, email: nil, name: nil, gate: gate)
        if let cloudKitToken { tokens[Self.cloudKitKey] = cloudKitToken }
        for (email, token) in otherCloudKitTokens {
            let key = Self.cloudKitKey(ofEmail: email)
            guard EmailAddress.normalized(email) != self.cloudKitEmail, sessions[key] == nil else { continue }
            sessions[key] = Session(key: key, email: email, name: nil, gate: SerialGate())
            tokens[key] = token
            cloudKitKeys[key] = key
        }
    }

    /// The session key of a `cloudkit:` user with a token of their own.
    static func cloudKitKey(ofEmail email: String) -> String { "cloudkit:" + EmailAddress.normalized(email) }

    /// The session key of the `cloudkit:` user with this email address and a token of their own, if any.
    func cloudKitSession(ofEmail email: String) -> String? { cloudKitKeys[Self.cloudKitKey(ofEmail: email)] }

    /// A `cloudkit:` user with a token of their own, named by `users/current`: requests as them go with it.
    func cloudKitSignedIn(_ user: UserRecordName, key: String) { cloudKitKeys[user] = key }

    func signedIn(_ user: User, token: String) {
        if sessions[user.recordName] == nil {
            sessions[user.recordName] = Session(
                key: user.recordName, email: user.email, name: user.name, gate: SerialGate())
            pools[user.recordName] = [user.recordName]
        }
        tokens[user.recordName] = token
    }

    /// The users among `users` with no session.
    func lacking(_ users: [UserRecordName]) -> Set<UserRecordName> {
        Set(users.filter { sessions[$0] == nil })
    }

    /// Another session for an emulator user, started by another sign-in.
    func addSession(for user: UserRecordName, email: String?, name: String?, token: String) -> Session {
        growing[user, default: 1] -= 1
        return newSession(for: user, email: email, name: name, token: token)
    }

    /// Another session for a user just signed in (`signedIn`), from a sign-in of the same request, while they
    /// have fewer than `chainsPerUser`.
    func signedInAgain(_ user: User, token: String) {
        guard sessions[user.recordName] != nil, (pools[user.recordName]?.count ?? 0) < chainsPerUser else { return }
        _ = newSession(for: user.recordName, email: user.email, name: user.name, token: token)
    }

    private func newSession(for user: UserRecordName, email: String?, name: String?, token: String) -> Session {
        let key = "\(user)#\(pools[user]?.count ?? 0)"
        let session = Session(key: key, email: email, name: name, gate: SerialGate())
        sessions[key] = session
        tokens[key] = token
        pools[user, default: []].append(key)
        return session
    }

    /// A sign-in for another session failed: the user keeps the sessions they have.
    func growthFailed(for user: UserRecordName) {
        growing[user, default: 1] -= 1
    }

    /// Marks a request under way on a session, and its end.
    func begin(_ key: String) { inFlight[key, default: 0] += 1 }
    func end(_ key: String) { inFlight[key, default: 1] -= 1 }

    func setCloudKitUser(_ user: User) {
        cloudKitUser = user
    }

    func token(of key: String) -> String? { tokens[key] }

    /// The newest token of `user`'s first chain on the emulator, or of the `cloudkit:` signed-in user (nil).
    func latestToken(for user: UserRecordName?, kind: WebServicesEndpoint.Kind) -> String? {
        switch kind {
        case .emulator: user.flatMap { tokens[$0] }
        case .cloudKit: user.flatMap { cloudKitKeys[$0] }.flatMap { tokens[$0] } ?? tokens[Self.cloudKitKey]
        }
    }

    /// The newest token of the `cloudkit:` user with this email address and a token of their own.
    func latestCloudKitToken(ofEmail email: String) -> String? {
        cloudKitSession(ofEmail: email).flatMap { tokens[$0] }
    }

    /// Whether to sign `user` in once more for a new session: every session of theirs has a request under
    /// way and they have fewer than `chainsPerUser`. Answering yes counts the sign-in as under way;
    /// the caller ends it with `addSession` or `growthFailed`.
    func shouldGrow(_ user: UserRecordName) -> Bool {
        guard let keys = pools[user], keys.allSatisfy({ inFlight[$0, default: 0] > 0 }) else { return false }
        guard keys.count + growing[user, default: 0] < chainsPerUser else { return false }
        growing[user, default: 0] += 1
        return true
    }

    func rotate(_ key: String, to token: String) {
        tokens[key] = token
    }

    /// The session to send a request as `user` with.
    /// - Throws: `ShareError` when the store cannot act as that user.
    func session(for user: UserRecordName?, kind: WebServicesEndpoint.Kind, displayName: String) throws -> Session {
        switch kind {
        case .emulator:
            guard let user, let first = sessions[user] else {
                throw ShareError(
                    .authenticationRequired,
                    "\(displayName) has no web auth token for user \(user ?? "(none)"): sign in as that user "
                        + "(by email address) before acting as them", subject: user)
            }
            // The session with the fewest requests under way.
            let keys = pools[user] ?? [first.key]
            let key = keys.min { inFlight[$0, default: 0] < inFlight[$1, default: 0] } ?? first.key
            return sessions[key] ?? first
        case .cloudKit:
            // A user with a token of their own, by record name (or, before `users/current`, by session key).
            if let user, let key = cloudKitKeys[user], let session = sessions[key] { return session }
            if let user, let signedIn = cloudKitUser, user != signedIn.recordName, user != defaultOwnerName {
                throw ShareError(
                    .authenticationFailed,
                    "\(displayName) acts only as the user signed in with CLOUDKIT_WEB_AUTH_TOKEN or `sharelane login` "
                        + "(\(signedIn.recordName)), not as \(user): to act as them, they sign in with `sharelane "
                        + "login --as HANDLE` (a token of their own) and run the command with it", subject: user)
            }
            guard tokens[Self.cloudKitKey] != nil else {
                throw ShareError(
                    .authenticationRequired,
                    "\(displayName) needs a signed-in user for the private and shared databases: run `sharelane "
                        + "login`, or set CLOUDKIT_WEB_AUTH_TOKEN (with CLOUDKIT_API_TOKEN); a server-to-server key "
                        + "reaches the public database only. See Docs/CloudKit.md")
            }
            return sessions[Self.cloudKitKey] ?? Session(key: Self.cloudKitKey, gate: SerialGate())
        }
    }
}
