import Foundation

/// The console's sessions: a random id for each browser that gave the API token, good for `lifetime`, and
/// beside it a second random value that the session's own pages put in their sign-out form (the CSRF check:
/// a page of another site cannot read it, so it cannot sign the console out).
///
/// Held in memory only, so a restart of `sharelane serve` signs every browser out (the API token changes
/// too, unless `--api-token` fixes it).
actor ConsoleSessions {
    /// The cookie that carries the session id.
    static let cookieName = "sharelane_console"

    /// The form check of the session whose page is being drawn: the sign-out form of every page carries it.
    @TaskLocal static var formCheck: String?

    private struct Session {
        var expires: ContinuousClock.Instant
        var formCheck: String
    }

    private let lifetime: Duration
    private let clock: EmulatorClock
    private var live: [String: Session] = [:]
    /// More sessions than a person opens by hand; past it the oldest go first.
    private let limit = 1_000

    init(lifetime: Duration, clock: EmulatorClock) {
        self.lifetime = lifetime
        self.clock = clock
    }

    /// The session's lifetime in whole seconds, for the cookie's `Max-Age`.
    nonisolated var maxAgeSeconds: Int { Int(lifetime.components.seconds) }

    /// 32 random bytes in hex (a cookie value or form field needs no escaping then).
    private static func randomHex() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// A new session's id.
    func start() -> String {
        let id = Self.randomHex()
        let now = clock.now()
        live = live.filter { $0.value.expires > now }
        if live.count >= limit, let oldest = live.min(by: { $0.value.expires < $1.value.expires }) {
            live[oldest.key] = nil
        }
        live[id] = Session(expires: now + lifetime, formCheck: Self.randomHex())
        return id
    }

    /// Whether `id` is a session this server started and that has not expired or ended.
    func isLive(_ id: String?) -> Bool {
        formCheck(of: id) != nil
    }

    /// The form check of a live session; nil when `id` is no live session.
    func formCheck(of id: String?) -> String? {
        guard let id, let session = live[id] else { return nil }
        guard session.expires > clock.now() else {
            live[id] = nil
            return nil
        }
        return session.formCheck
    }

    /// Ends a live session when `check` is its form check (compared in constant time); false otherwise.
    func end(_ id: String?, check: String?) -> Bool {
        guard let id, let expected = formCheck(of: id), let check,
            EmulatorConfiguration.sameSecret(Array(check.utf8), Array(expected.utf8))
        else { return false }
        live[id] = nil
        return true
    }
}
