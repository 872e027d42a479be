import CloudKitWire
import Foundation
import ShareKit

/// What `sharelane serve`'s options set beyond where it listens and its API token, each defaulting as the
/// option does. serve reads its command line into one and `SharelaneEmulator.start(…, configuration:)` takes
/// one, and both make their `EmulatorConfiguration` and store limits from it here, so that an emulator in a
/// test starts as `serve` with the same options would.
///
/// ```swift
/// var configuration = SharelaneEmulator.Configuration(strictTokens: true, indexLag: .seconds(1))
/// try configuration.addServerKey(id: "test-key", pem: publicKeyPEM)   // serve --server-key test-key=FILE
/// configuration.network = try NetworkConditions(latency: "80ms~20ms", throttle: nil, faults: "unavailable=5%", seed: "7")
/// ```
public struct EmulatorSettings: Sendable {
    /// The server-to-server keys whose signed requests reach the public database (`--server-key`); none by
    /// default, so a signed request is refused.
    public var serverKeys: ServerKeyring
    /// Each web auth token is good for one request, as Apple's reference says (`--strict-tokens`); off.
    public var strictTokens: Bool
    /// How long after a write `records/query` sees it (`--index-lag`); zero: at once.
    public var indexLag: Duration
    /// Asset checksums answered as Apple's look, a digest a client cannot compute (`--opaque-checksums`); off.
    public var opaqueChecksums: Bool
    /// Latency, throttle, faults and their seed (`--latency`, `--throttle`, `--faults`, `--fault-seed`); a
    /// good network by default.
    public var network: NetworkConditions
    /// Web origins besides loopback ones that may call from a browser (`--allow-origin`); none.
    public var allowedOrigins: [String]
    /// Host names besides loopback ones a request's `Host` may give (`--allow-host`); none.
    public var allowedHosts: [String]
    /// Containers and environments the store holds at most (`--max-worlds`); nil: the store's standard 500.
    public var maxWorlds: Int?
    /// The container a recipe is seeded in instead of its own `container:`; nil keeps the recipe's.
    public var container: String?
    /// The environment a recipe is seeded in instead of its own `environment:`; nil keeps the recipe's.
    public var environment: CloudKitEnvironment?

    public init(
        serverKeys: ServerKeyring = ServerKeyring(), strictTokens: Bool = false, indexLag: Duration = .zero,
        opaqueChecksums: Bool = false, network: NetworkConditions = .none, allowedOrigins: [String] = [],
        allowedHosts: [String] = [], maxWorlds: Int? = nil, container: String? = nil,
        environment: CloudKitEnvironment? = nil
    ) {
        self.serverKeys = serverKeys
        self.strictTokens = strictTokens
        self.indexLag = indexLag
        self.opaqueChecksums = opaqueChecksums
        self.network = network
        self.allowedOrigins = allowedOrigins
        self.allowedHosts = allowedHosts
        self.maxWorlds = maxWorlds
        self.container = container
        self.environment = environment
    }

    /// Accepts public-database requests signed with the key `id` (`--server-key ID=FILE`): `pem` is the P-256
    /// public key (`openssl ec -in eckey.pem -pubout`) or the private key.
    /// - Throws: `BAD_REQUEST` when `pem` is not such a key.
    public mutating func addServerKey(id: String, pem: String) throws {
        try serverKeys.add(keyID: id, pem: pem)
    }

    /// `indexLag` in seconds, as the emulator counts it.
    var indexLagSeconds: Double {
        let parts = indexLag.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    /// How an emulator with these settings listens on `host:port` (0: a free port) and authenticates.
    public func emulatorConfiguration(host: String, port: Int, apiToken: String) -> EmulatorConfiguration {
        var configuration = EmulatorConfiguration(
            host: host, port: port, apiToken: apiToken, strictTokens: strictTokens, serverKeys: serverKeys,
            opaqueChecksums: opaqueChecksums, allowedOrigins: allowedOrigins, networkConditions: network)
        configuration.indexLag = indexLagSeconds
        configuration.allowedHosts = allowedHosts
        return configuration
    }
}
