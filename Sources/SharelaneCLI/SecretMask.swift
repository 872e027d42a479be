import Foundation
import Logging
import ShareKit
import Synchronization

/// The credentials this process knows (the environment's credential variables and `--api-token`), masked as
/// `***` in everything the command line writes: standard output, standard error and log lines.
///
/// Recipes may not hold credentials (the loader refuses them) and the HTTP client masks the tokens it sent in
/// the errors it reports; this is the last net, for a value that reaches the output some other way (a server
/// reflecting a request, a store value that holds a token).
enum SecretMask {
    private static let extra = Mutex<[String]>([])
    private static let fromEnvironment = Credentials.secrets(in: ProcessInfo.processInfo.environment)

    /// Adds a secret given on the command line (`--api-token`).
    static func register(_ secret: String?) {
        guard let secret, secret.count >= 4 else { return }
        extra.withLock { extra in if !extra.contains(secret) { extra.append(secret) } }
    }

    static var secrets: [String] { fromEnvironment + extra.withLock { $0 } }

    /// `text` with every known secret replaced by `***`.
    static func apply(_ text: String) -> String {
        let secrets = self.secrets
        return secrets.isEmpty ? text : Credentials.masking(secrets, in: text)
    }

}

/// A log handler that masks secrets in messages and metadata before its base handler writes them.
struct MaskingLogHandler: LogHandler {
    var base: StreamLogHandler

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        event.message = "\(SecretMask.apply(event.message.description))"
        event.metadata = event.metadata?.mapValues { Logger.Metadata.Value.string(SecretMask.apply("\($0)")) }
        base.log(event: event)
    }
}
