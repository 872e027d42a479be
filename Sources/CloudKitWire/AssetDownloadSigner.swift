import Crypto
import Foundation

/// How `sharelane serve` makes its asset download URLs unguessable: an HMAC-SHA256, with a key of the
/// server's own, over what the URL grants (the world, the kept content and the expiry), so that a URL is good
/// only as it was handed out. Apple's download URLs are bearer URLs of the same kind: whoever holds one
/// downloads without credentials until it expires (Docs/CloudKit.md, "Assets").
///
/// The key is drawn at random when the server starts and never leaves it: a restart ends the URLs handed out
/// before, as a reader asks for the record again for a fresh one. It lives here, beside `ServerKeyring`,
/// because this module is the one that holds the package's cryptography.
package struct AssetDownloadSigner: Sendable {
    private let key: SymmetricKey

    /// A signer with a new random key.
    package init() {
        key = SymmetricKey(size: .bits256)
    }

    /// The signature of a grant, URL-safe base64 without padding (it stands in a URL's query).
    package func signature(container: String, environment: String, checksum: String, expiry: Int64) -> String {
        let code = HMAC<SHA256>.authenticationCode(
            for: Self.message(container: container, environment: environment, checksum: checksum, expiry: expiry),
            using: key)
        return Data(code).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Whether `signature` is this signer's for the grant (compared in constant time).
    package func verify(
        _ signature: String, container: String, environment: String, checksum: String, expiry: Int64
    ) -> Bool {
        var text = signature.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let code = Data(base64Encoded: text), code.count == SHA256.byteCount else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(
            code,
            authenticating: Self.message(
                container: container, environment: environment, checksum: checksum, expiry: expiry),
            using: key)
    }

    /// The signed text: each part on a line of its own, so that no two grants read the same (a container
    /// name holds no newline).
    private static func message(container: String, environment: String, checksum: String, expiry: Int64) -> Data {
        Data("sharelane asset download\n\(container)\n\(environment)\n\(checksum)\n\(expiry)".utf8)
    }
}
