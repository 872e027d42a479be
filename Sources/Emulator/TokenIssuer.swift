import CloudKitWire
import Foundation
import ShareKit

/// Issues and redeems web auth tokens: each is good for one request, and each response hands out the next.
actor TokenIssuer {
    private struct Grant {
        var user: UserRecordName
        var expires: ContinuousClock.Instant
    }

    private let lifetime: Duration
    private let clock: EmulatorClock
    private var live: [String: Grant] = [:]
    private var retired: Set<String> = []
    private var retiredOrder: [String] = []
    private let retiredLimit = 100_000

    init(lifetime: Duration, clock: EmulatorClock) {
        self.lifetime = lifetime
        self.clock = clock
    }

    /// A new single-use token for `user`: 32 random bytes in base64, so `+`, `/` and `=` occur as in
    /// Apple's tokens and clients must URL-encode them.
    func issue(for user: UserRecordName) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let token = Data(bytes).base64EncodedString()
        live[token] = Grant(user: user, expires: clock.now() + lifetime)
        return token
    }

    /// Redeems a token: the user it was issued for; the token is then spent.
    /// - Throws: `AUTHENTICATION_REQUIRED` (sign in again) for no token, a spent, expired or unknown one;
    ///   a bad API token is `AUTHENTICATION_FAILED`, checked before.
    func redeem(_ token: String?) throws -> UserRecordName {
        guard let token, !token.isEmpty else {
            throw ShareError(
                .authenticationRequired,
                "this request needs a ckWebAuthToken: sign in with POST /auth/signin and pass the token it returns")
        }
        if let grant = live.removeValue(forKey: token) {
            retire(token)
            guard grant.expires > clock.now() else {
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
