import Foundation

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
    /// Larger request bodies are refused with `BAD_REQUEST`.
    public var maxBodyBytes: Int
    /// The time tokens expire by.
    public var clock: EmulatorClock

    public init(
        host: String = "127.0.0.1", port: Int = 8420, apiToken: String = EmulatorConfiguration.makeAPIToken(),
        tokenLifetime: Duration = .seconds(3600), maxBodyBytes: Int = 16 << 20, clock: EmulatorClock = .system
    ) {
        self.host = host
        self.port = port
        self.apiToken = apiToken
        self.tokenLifetime = tokenLifetime
        self.maxBodyBytes = maxBodyBytes
        self.clock = clock
    }

    /// A fresh random API token (hex, 64 characters).
    public static func makeAPIToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
