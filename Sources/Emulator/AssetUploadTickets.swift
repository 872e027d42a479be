import Foundation
import ShareKit

/// The one-time upload URLs `assets/upload` hands out: each is good for one upload within its lifetime
/// (15 minutes, as Apple's), then spent. Only the tickets live in memory; the bytes uploaded are kept by the
/// store, so a restart loses unspent URLs (ask `assets/upload` again), never an uploaded asset.
actor AssetUploadTickets {
    private var expiries: [String: (expiry: ContinuousClock.Instant, world: StoreWorld)] = [:]
    private let limit = 100_000

    /// Why a ticket cannot be used.
    enum Refusal: Error {
        case unknown, expired
    }

    /// A new ticket for `world`'s upload, good until `now + lifetime`: 24 random bytes as hex.
    func issue(now: ContinuousClock.Instant, lifetime: Duration, world: StoreWorld) -> String {
        var generator = SystemRandomNumberGenerator()
        let ticket = (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }
            .joined()
        if expiries.count >= limit { expiries = expiries.filter { $0.value.expiry > now } }
        if expiries.count >= limit, let oldest = expiries.min(by: { $0.value.expiry < $1.value.expiry })?.key {
            expiries.removeValue(forKey: oldest)
        }
        expiries[ticket] = (now + lifetime, world)
        return ticket
    }

    /// Spends `ticket`: it is gone afterwards, good or not. Answers the world it was issued for.
    /// - Throws: `Refusal.unknown` for a ticket never issued or already spent, `.expired` for one past its
    ///   lifetime.
    func spend(_ ticket: String, now: ContinuousClock.Instant) throws -> StoreWorld {
        guard let issued = expiries.removeValue(forKey: ticket) else { throw Refusal.unknown }
        guard issued.expiry > now else { throw Refusal.expired }
        return issued.world
    }
}
