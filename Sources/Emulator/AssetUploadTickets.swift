import Foundation

/// The one-time upload URLs `assets/upload` hands out: each is good for one upload within its lifetime
/// (15 minutes, as Apple's), then spent. Only the tickets live in memory; the bytes uploaded are kept by the
/// store, so a restart loses unspent URLs (ask `assets/upload` again), never an uploaded asset.
actor AssetUploadTickets {
    private var expiries: [String: ContinuousClock.Instant] = [:]
    private let limit = 100_000

    /// Why a ticket cannot be used.
    enum Refusal: Error {
        case unknown, expired
    }

    /// A new ticket, good until `now + lifetime`: 24 random bytes as hex.
    func issue(now: ContinuousClock.Instant, lifetime: Duration) -> String {
        var generator = SystemRandomNumberGenerator()
        let ticket = (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }
            .joined()
        if expiries.count >= limit { expiries = expiries.filter { $0.value > now } }
        if expiries.count >= limit, let oldest = expiries.min(by: { $0.value < $1.value })?.key {
            expiries.removeValue(forKey: oldest)
        }
        expiries[ticket] = now + lifetime
        return ticket
    }

    /// Spends `ticket`: it is gone afterwards, good or not.
    /// - Throws: `Refusal.unknown` for a ticket never issued or already spent, `.expired` for one past its
    ///   lifetime.
    func spend(_ ticket: String, now: ContinuousClock.Instant) throws {
        guard let expiry = expiries.removeValue(forKey: ticket) else { throw Refusal.unknown }
        guard expiry > now else { throw Refusal.expired }
    }
}
