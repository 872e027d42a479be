import CloudKitWire
import Foundation
import ShareKit

/// Issues and redeems web auth tokens; each response hands out the next one.
///
/// Strict (`serve --strict-tokens`, Apple's reference): a token is good for one request. Otherwise (the live
/// service's behaviour, the default) a token stays good, however often it is used, until it expires or its
/// user has been handed `keptPerUser` newer ones. A fixture's token (`issueKept`: the seeded recipe's people,
/// as `serve --recipe` hands them to a test suite) stays good for as long as the server runs, however many
/// requests use it and however many tokens the answers hand out beside it.
actor TokenIssuer {
    private struct Grant {
        var user: UserRecordName
        /// nil: never, a fixture's token.
        var expires: ContinuousClock.Instant?

        func isLive(at now: ContinuousClock.Instant) -> Bool { expires.map { $0 > now } ?? true }
    }

    private let lifetime: Duration
    private let clock: EmulatorClock
    private var live: [String: Grant] = [:]
    private var retired: Set<String> = []
    private var retiredOrder: [String] = []
    private let retiredLimit = 100_000
    private let strict: Bool
    /// Tokens issued since expired ones were last dropped (lenient tokens are never spent).
    private var issuedSincePrune = 0
    /// Lenient tokens per user, oldest first: each user keeps the newest `keptPerUser`, so that a busy
    /// client (every answer hands out a token) does not grow the server without bound.
    private var issuedOrder: [UserRecordName: [String]] = [:]
    static let keptPerUser = 1_000
    /// The fixture's token of each user (`issueKept`): one each, handed out again, so a suite that asks for
    /// its people's tokens before every test does not grow the server.
    private var keptTokens: [UserRecordName: String] = [:]

    init(lifetime: Duration, clock: EmulatorClock, strict: Bool = true) {
        self.lifetime = lifetime
        self.clock = clock
        self.strict = strict
    }

    /// A new token for `user` (single-use when strict): 32 random bytes in base64, so `+`, `/` and `=` occur as in
    /// Apple's tokens and clients must URL-encode them.
    func issue(for user: UserRecordName) -> String {
        let token = Self.newToken()
        live[token] = Grant(user: user, expires: clock.now() + lifetime)
        guard !strict else { return token }
        issuedOrder[user, default: []].append(token)
        if let order = issuedOrder[user], order.count > Self.keptPerUser, let oldest = order.first {
            issuedOrder[user]?.removeFirst()
            live.removeValue(forKey: oldest)
            retire(oldest)
        }
        issuedSincePrune += 1
        if issuedSincePrune >= 10_000 { pruneExpired() }
        return token
    }

    /// The token of one of the fixture's people (`serve --recipe`'s environment, `SHARELANE_USERS`,
    /// `GET /_sharelane/users`): good for every request while the server runs, neither expiring nor pushed out
    /// by the tokens each answer hands out, as a test suite that reads it once from its environment needs. The
    /// same token each time it is asked for. Strict (`serve --strict-tokens`), a new single-use token instead,
    /// as CloudKit's reference has every token.
    func issueKept(for user: UserRecordName) -> String {
        guard !strict else { return issue(for: user) }
        if let kept = keptTokens[user], live[kept] != nil { return kept }
        let token = Self.newToken()
        live[token] = Grant(user: user, expires: nil)
        keptTokens[user] = token
        return token
    }

    private static func newToken() -> String {
        // Four draws of eight bytes: a draw is a system call, and one a byte was a sixtieth of the emulator's
        // time under load.
        var generator = SystemRandomNumberGenerator()
        let words = (0..<4).map { _ in generator.next() }
        return words.withUnsafeBytes { Data($0) }.base64EncodedString()
    }

    /// Redeems a token: the user it was issued for; a strict token is then spent.
    /// - Throws: `AUTHENTICATION_REQUIRED` (sign in again) for no token, a spent, expired or unknown one;
    ///   a bad API token is `AUTHENTICATION_FAILED`, checked before.
    func redeem(_ token: String?) throws -> UserRecordName {
        guard let token, !token.isEmpty else {
            throw ShareError(
                .authenticationRequired,
                "this request needs a ckWebAuthToken: sign in with POST /auth/signin and pass the token it returns")
        }
        if !strict, let grant = live[token] {
            guard grant.isLive(at: clock.now()) else {
                live.removeValue(forKey: token)
                retire(token)
                throw ShareError(.authenticationRequired, "the ckWebAuthToken has expired: sign in again")
            }
            return grant.user
        }
        if let grant = live.removeValue(forKey: token) {
            retire(token)
            guard grant.isLive(at: clock.now()) else {
                throw ShareError(.authenticationRequired, "the ckWebAuthToken has expired: sign in again")
            }
            return grant.user
        }
        if retired.contains(token) {
            throw ShareError(
                .authenticationRequired,
                "the ckWebAuthToken was already used or has expired: a token is good for one request; use the one "
                    + "in the previous response's \(WireSpelling.webAuthTokenHeader) header, or sign in again")
        }
        throw ShareError(
            .authenticationRequired,
            "the ckWebAuthToken was not issued by this server (it may have restarted since): sign in again")
    }

    /// The user a live token was issued for, without spending or retiring it: how `serve --throttle` tells
    /// whose request it counts before authentication redeems the token. Nil for a spent, expired or unknown one.
    func holder(of token: String) -> UserRecordName? {
        guard let grant = live[token], grant.isLive(at: clock.now()) else { return nil }
        return grant.user
    }

    private func pruneExpired() {
        issuedSincePrune = 0
        let now = clock.now()
        for (token, grant) in live where !grant.isLive(at: now) {
            live.removeValue(forKey: token)
            retire(token)
        }
        for (user, order) in issuedOrder {
            let kept = order.filter { live[$0] != nil }
            issuedOrder[user] = kept.isEmpty ? nil : kept
        }
    }

    private func retire(_ token: String) {
        retired.insert(token)
        retiredOrder.append(token)
        if retiredOrder.count > retiredLimit {
            let drop = retiredOrder.prefix(retiredLimit / 10)
            for old in drop { retired.remove(old) }
            retiredOrder.removeFirst(drop.count)
        }
    }
}
