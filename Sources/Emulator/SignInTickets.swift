import Foundation

/// The one-time tickets of sign-in `redirectURL`s. A request refused with `AUTHENTICATION_REQUIRED` that
/// carried this emulator's API token gets a `redirectURL` to the sign-in page with a new ticket; the page
/// signs one user in with it, then the ticket is spent. A ticket stands for the API token the refused
/// request carried, so the page itself never asks for it.
///
/// A ticket also remembers the allowed origin of the page whose request it answered (its `Origin` header), so
/// that the sign-in popup knows which page to hand the token to without the `Referer` header, which a browser
/// leaves out when an `https` page opens the emulator's `http` one (the default referrer policy,
/// `strict-origin-when-cross-origin`).
actor SignInTickets {
    /// A ticket's expiry and the page origin it was issued to.
    private struct Entry {
        var expiry: ContinuousClock.Instant
        var opener: String?
    }

    private var entries: [String: Entry] = [:]
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

    /// A new ticket; `opener` is the allowed origin of the page that asked, when a page did.
    func issue(opener: String? = nil) -> String {
        let ticket = Self.randomToken()
        let now = clock.now()
        if entries.count >= limit { entries = entries.filter { $0.value.expiry > now } }
        if entries.count >= limit, let oldest = entries.min(by: { $0.value.expiry < $1.value.expiry })?.key {
            entries.removeValue(forKey: oldest)
        }
        entries[ticket] = Entry(expiry: now + lifetime, opener: opener)
        return ticket
    }

    /// Whether `ticket` is good (issued here, not spent, not expired).
    func isValid(_ ticket: String?) -> Bool {
        entry(ticket) != nil
    }

    /// The origin of the page a good ticket was issued to; nil when none (or the ticket is not good).
    func opener(of ticket: String?) -> String? {
        entry(ticket)?.opener
    }

    /// Spends `ticket`: nil when it was not good, else the origin it was issued to (`.some(nil)` for none).
    func spend(_ ticket: String?) -> String?? {
        guard let ticket, let entry = entry(ticket) else { return nil }
        entries.removeValue(forKey: ticket)
        return .some(entry.opener)
    }

    private func entry(_ ticket: String?) -> Entry? {
        guard let ticket, let entry = entries[ticket], entry.expiry > clock.now() else { return nil }
        return entry
    }
}
