import Foundation

/// The one-time tickets of sign-in `redirectURL`s. A request refused with `AUTHENTICATION_REQUIRED` that
/// carried this emulator's API token gets a `redirectURL` to the sign-in page with a new ticket; the page
/// signs one user in with it, then the ticket is spent. A ticket stands for the API token the refused
/// request carried, so the page itself never asks for it.
actor SignInTickets {
    private var expiries: [String: ContinuousClock.Instant] = [:]
    private let lifetime: Duration
    private let clock: EmulatorClock
    private let limit = 10_000

    init(lifetime: Duration = .seconds(15 * 60), clock: EmulatorClock) {
        self.lifetime = lifetime
        self.clock = clock
    }

    /// Random bytes in base64, URL-safe and unpadded by default: a ticket, or a page's script nonce.
    nonisolated static func randomToken(bytes count: Int = 16, urlSafe: Bool = true) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let text = Data(bytes).base64EncodedString()
        guard urlSafe else { return text }
        return text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A new ticket.
    func issue() -> String {
        let ticket = Self.randomToken()
        let now = clock.now()
        if expiries.count >= limit { expiries = expiries.filter { $0.value > now } }
        if expiries.count >= limit, let oldest = expiries.min(by: { $0.value < $1.value })?.key {
            expiries.removeValue(forKey: oldest)
        }
        expiries[ticket] = now + lifetime
        return ticket
    }

    /// Whether `ticket` is good (issued here, not spent, not expired).
    func isValid(_ ticket: String?) -> Bool {
        guard let ticket, let expiry = expiries[ticket] else { return false }
        return expiry > clock.now()
    }

    /// Spends `ticket`: true when it was good.
    func spend(_ ticket: String?) -> Bool {
        guard isValid(ticket), let ticket else { return false }
        expiries.removeValue(forKey: ticket)
        return true
    }
}
