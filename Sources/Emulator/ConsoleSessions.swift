import Foundation

/// The console's sessions: a random id for each browser that gave the API token, good for `lifetime`.
///
/// Held in memory only, so a restart of `sharelane serve` signs every browser out (the API token changes
/// too, unless `--api-token` fixes it).
actor ConsoleSessions {
    /// The cookie that carries the session id.
    static let cookieName = "sharelane_console"

    private let lifetime: Duration
    private let clock: EmulatorClock
    private var live: [String: ContinuousClock.Instant] = [:]
    /// More sessions than a person opens by hand; past it the oldest go first.
    private let limit = 1_000

    init(lifetime: Duration, clock: EmulatorClock) {
        self.lifetime = lifetime
        self.clock = clock
    }

    /// The session's lifetime in whole seconds, for the cookie's `Max-Age`.
    nonisolated var maxAgeSeconds: Int { Int(lifetime.components.seconds) }

    /// A new session: 32 random bytes in hex (a cookie value needs no escaping then).
    func start() -> String {
        var generator = SystemRandomNumberGenerator()
        let id = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        let now = clock.now()
        live = live.filter { $0.value > now }
        if live.count >= limit, let oldest = live.min(by: { $0.value < $1.value }) {
            live[oldest.key] = nil
        }
        live[id] = now + lifetime
        return id
    }

    /// Whether `id` is a session this server started and that has not expired or ended.
    func isLive(_ id: String?) -> Bool {
        guard let id, let expires = live[id] else { return false }
        guard expires > clock.now() else {
            live[id] = nil
            return false
        }
        return true
    }

    /// Ends a session (sign-out).
    func end(_ id: String?) {
        if let id { live[id] = nil }
    }
}
