import CloudKitWire
import Foundation
import ShareKit

/// How `sharelane serve` listens and authenticates.
public struct EmulatorConfiguration: Sendable {
    /// The address to listen on; loopback unless told otherwise.
    public var host: String
    /// The port; 0 picks a free one (tests).
    public var port: Int
    /// The API token every request must carry as `ckAPIToken`; a secret.
    public var apiToken: String
    /// How long an unused web auth token stays good.
    public var tokenLifetime: Duration
    /// Larger request bodies are refused with `BAD_REQUEST` (`bodyTooLarge`).
    public var maxBodyBytes: Int
    /// The time tokens expire by.
    public var clock: EmulatorClock
    /// How long an asset's `downloadURL` stays good after the read that handed it out: an hour, as Apple's
    /// ("about an hour"); a test shortens it or moves `clock`.
    public var assetDownloadLifetime: Duration = .seconds(3600)
    /// How long a console session lasts after the API token was given (the cookie's Max-Age).
    public var consoleSessionLifetime: Duration
    /// Web auth tokens serve one round trip, as Apple's reference says (`serve --strict-tokens`); by default
    /// a token stays good until it expires, as on the live service, though every answer hands out a new one.
    public var strictTokens: Bool
    /// The server-to-server keys whose signed requests reach the public database (`serve --server-key`).
    public var serverKeys: ServerKeyring
    /// Asset checksums are answered as Apple's look, a digest the client cannot compute
    /// (`serve --opaque-checksums`, `OpaqueAssetChecksum`); by default serve's own `fnv1a64:HEX`.
    public var opaqueChecksums: Bool
    /// Web origins besides loopback ones whose pages may call the emulator from a browser (CORS) and receive
    /// a token from the sign-in popup (`serve --allow-origin`), each as `scheme://host[:port]`.
    public var allowedOrigins: [String]
    /// How long after a write `records/query` sees it (`serve --index-lag`), as CloudKit's query indexes lag
    /// behind its writes; lookups by name and change feeds see a write at once. 0: at once.
    public var indexLag: Double = 0
    /// The network played between the emulator and its clients from the start (`serve --latency`,
    /// `--throttle`, `--faults`, `--fault-seed`); `POST /_sharelane/faults` changes it while it runs.
    public var networkConditions: NetworkConditions
    /// Host names besides this machine's loopback ones and `host` that a request's `Host` header may give
    /// (`serve --allow-host`); any other name is refused (`HostNameMiddleware`), so that a page of
    /// a name rebound to this machine cannot use the emulator.
    public var allowedHosts: [String] = []
    /// How many named snapshots serve keeps, and how many bytes they may hold together (Docs/Testing.md).
    public var snapshotLimits = SnapshotLimits.standard

    public init(
        host: String = "127.0.0.1", port: Int = 8420, apiToken: String = EmulatorConfiguration.makeAPIToken(),
        tokenLifetime: Duration = .seconds(3600), maxBodyBytes: Int = 16 << 20, clock: EmulatorClock = .system,
        consoleSessionLifetime: Duration = .seconds(8 * 3600), strictTokens: Bool = false,
        serverKeys: ServerKeyring = ServerKeyring(), opaqueChecksums: Bool = false, allowedOrigins: [String] = [],
        networkConditions: NetworkConditions = .none
    ) {
        self.host = host
        self.port = port
        self.apiToken = apiToken
        self.tokenLifetime = tokenLifetime
        self.maxBodyBytes = maxBodyBytes
        self.clock = clock
        self.consoleSessionLifetime = consoleSessionLifetime
        self.strictTokens = strictTokens
        self.serverKeys = serverKeys
        self.opaqueChecksums = opaqueChecksums
        self.allowedOrigins = allowedOrigins.compactMap(Self.origin(of:))
        self.networkConditions = networkConditions
    }

    /// Whether an IP address (as a socket gives it) is this machine's loopback: 127.0.0.0/8, `::1`, or
    /// 127.0.0.0/8 mapped into IPv6 (`::ffff:127.0.0.1`).
    public static func isLoopback(ipAddress: String) -> Bool {
        var address = ipAddress.lowercased()
        if address.hasPrefix("[") && address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        if address == "::1" || address == "0:0:0:0:0:0:0:1" { return true }
        for mapped in ["::ffff:", "0:0:0:0:0:ffff:"] where address.hasPrefix(mapped) {
            address = String(address.dropFirst(mapped.count))
        }
        let octets = address.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127"
            && octets.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) && UInt8($0) != nil }
    }

    /// Whether a page of `origin` (an `Origin` header's value) may call the emulator and be handed a token:
    /// any `http:` or `https:` origin on this machine (localhost, 127.0.0.0/8, [::1]), as a web app's dev
    /// server is, and the origins of `allowedOrigins`. Never the opaque origin `null`.
    public func allowsOrigin(_ origin: String) -> Bool {
        guard let normalized = Self.origin(of: origin), let components = URLComponents(string: normalized),
            let host = components.host?.lowercased()
        else { return false }
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        if octets.count == 4, octets[0] == "127", octets.allSatisfy({ UInt8($0) != nil }) { return true }
        return allowedOrigins.contains(normalized)
    }

    /// `scheme://host[:port]` of an origin or URL as a browser writes it: scheme and host lowercased, no
    /// default port; nil when it is not an http(s) origin.
    public static func origin(of text: String) -> String? {
        guard let components = URLComponents(string: text.trimmingCharacters(in: .whitespaces)),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty, components.user == nil, components.password == nil
        else { return nil }
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let port = components.port.flatMap { $0 == (scheme == "https" ? 443 : 80) ? nil : $0 }
        return "\(scheme)://\(shownHost.lowercased())" + (port.map { ":\($0)" } ?? "")
    }

    /// Whether `given` is this emulator's API token, compared in constant time so that the answer's timing
    /// does not tell how much of a guess was right.
    public func acceptsAPIToken(_ given: String) -> Bool {
        Self.sameSecret(Array(given.utf8), Array(apiToken.utf8))
    }

    /// Whether two secrets are the same, in time that does not depend on where they differ.
    static func sameSecret(_ x: [UInt8], _ y: [UInt8]) -> Bool {
        guard !x.isEmpty, x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }

    /// A fresh random API token (hex, 64 characters).
    public static func makeAPIToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}

extension EmulatorConfiguration {
    /// The refusal of a request body over `maxBodyBytes`, or one that ended before its length: one sentence
    /// wherever serve reads a body.
    var bodyTooLarge: ShareError {
        ShareError(.badRequest, "the request body is larger than \(maxBodyBytes) bytes, or was cut short")
    }
}
