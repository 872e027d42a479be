import CloudKitWire
import Foundation
import ShareKit

/// The download URLs of kept assets, as CloudKit hands them out: with the record that holds the asset, to a
/// caller who may read it, good in that world only and for a while (an hour, as Apple's), then gone. A URL
/// is a bearer URL, as Apple's are: whoever holds it downloads without credentials until it expires.
///
/// A URL carries what it grants in its query, after Apple's `${f}` file name placeholder, as Apple's do:
/// the container (`ckc`) and environment (`cke`) whose store keeps the bytes, the expiry (`e`, UNIX
/// seconds, as Apple's `e=`) and a signature over them and the content (`s`, `AssetDownloadSigner`). Nothing
/// is kept per URL: a read of a thousand records with assets costs a thousand signatures, not a thousand
/// entries in memory.
struct AssetDownloads: Sendable {
    /// What a download URL's query grants, once its signature is checked.
    enum Grant: Equatable {
        /// The bytes kept under the checksum in this world.
        case granted(StoreWorld)
        /// A URL serve handed out, past its expiry: Apple's answer `410 Gone`.
        case expired
    }

    private let signer = AssetDownloadSigner()
    let lifetime: Duration
    private let clock: EmulatorClock
    /// The wall time when the server started, and its clock then: expiries are UNIX seconds, as Apple's, read
    /// by the emulator's clock, which a test moves forward.
    private let startedAt: (unix: Double, instant: ContinuousClock.Instant)

    init(lifetime: Duration, clock: EmulatorClock) {
        self.lifetime = lifetime
        self.clock = clock
        startedAt = (Date().timeIntervalSince1970, clock.now())
    }

    /// The lifetime in words for a refusal: `1 hour`, `90 seconds`.
    var lifetimeText: String {
        let seconds = lifetime.components.seconds
        if seconds % 3600 == 0 { return seconds == 3600 ? "1 hour" : "\(seconds / 3600) hours" }
        if seconds % 60 == 0 { return seconds == 60 ? "1 minute" : "\(seconds / 60) minutes" }
        return seconds == 1 ? "1 second" : "\(seconds) seconds"
    }

    /// Now, in UNIX seconds, by the emulator's clock.
    private func unixNow() -> Double {
        let elapsed = clock.now() - startedAt.instant
        return startedAt.unix + Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// The query that makes a download URL good for the bytes kept under `kept` (`fnv1a64:HEX`) in `world`,
    /// from now until `lifetime` has passed.
    func grant(_ kept: String, in world: StoreWorld) -> String {
        let lifetimeSeconds = Double(lifetime.components.seconds) + Double(lifetime.components.attoseconds) / 1e18
        let expiry = Int64((unixNow() + lifetimeSeconds).rounded(.up))
        let environment = WireSpelling.environment(world.environment)
        let signature = signer.signature(
            container: world.container, environment: environment, checksum: kept, expiry: expiry)
        return "?ckc=\(world.container)&cke=\(environment)&e=\(expiry)&s=\(signature)"
    }

    /// What a download URL's query grants for the bytes kept under `kept`; nil for a URL serve did not hand
    /// out (no query, another world's, another content's, a forged or altered one), which answers as a name
    /// that does not exist.
    func check(_ kept: String, query: [String: String]) -> Grant? {
        guard let container = query["ckc"], let spelled = query["cke"],
            let environment = WireSpelling.environment(spelled), let expiryText = query["e"],
            let expiry = Int64(expiryText), let signature = query["s"],
            signer.verify(signature, container: container, environment: spelled, checksum: kept, expiry: expiry)
        else { return nil }
        guard unixNow() < Double(expiry) else { return .expired }
        return .granted(StoreWorld(container: container, environment: environment))
    }
}
