/// Which environment variables hold credentials, and how a text is kept free of them.
///
/// Tokens and keys never appear in output, plans, logs or files other than the token store: the stores read
/// them from the environment, recipes may not hold them, and text that might reflect one (an error a server
/// echoed) is masked before anyone sees it.
public enum Credentials {
    /// CloudKit's API token.
    public static let apiTokenVariable = "CLOUDKIT_API_TOKEN"
    /// A signed-in user's web auth token.
    public static let webAuthTokenVariable = "CLOUDKIT_WEB_AUTH_TOKEN"
    /// A server-to-server key's ID.
    public static let keyIDVariable = "CLOUDKIT_KEY_ID"

    /// What a masked secret reads as.
    public static let mask = "***"

    /// Whether the variable `name` holds a credential: one of CloudKit's, or any whose name says it holds a
    /// token, a secret, a password or a key. A variable naming a place (`…_FILE`, `…_PATH`, `…_DIR`, such as
    /// `SHARELANE_TOKEN_FILE`, `CLOUDKIT_PRIVATE_KEY_FILE`) holds a path, not the secret, and is shown: an error
    /// about a missing key file names the file.
    public static func isCredential(variable name: String) -> Bool {
        let upper = name.uppercased()
        if [apiTokenVariable, webAuthTokenVariable, keyIDVariable].contains(upper) {
            return true
        }
        if ["_FILE", "_PATH", "_DIR"].contains(where: upper.hasSuffix) { return false }
        return ["TOKEN", "SECRET", "PASSWORD", "PASSWD", "PRIVATE_KEY", "API_KEY"].contains { upper.contains($0) }
            || upper.hasSuffix("_KEY")
    }

    /// The values of the credential variables in `environment`, at least 8 characters long: tokens and keys
    /// are long, and a short value (`true`, `1`) of a variable that only sounds like one would mask ordinary
    /// words everywhere.
    public static func secrets(in environment: [String: String]) -> [String] {
        environment.compactMap { name, value in
            isCredential(variable: name) && value.count >= 8 ? value : nil
        }
    }

    /// `text` with every occurrence of each secret (and of its percent-encoded form, as a URL carries it)
    /// replaced by `***`.
    public static func masking(_ secrets: [String], in text: String) -> String {
        var text = text
        for secret in secrets where secret.count >= 4 {
            for form in forms(of: secret) where text.contains(form) {
                text = text.replacingOccurrences(of: form, with: mask)
            }
        }
        return text
    }

    /// A secret as it is written raw, percent-encoded in a query, and JSON-escaped, longest first.
    public static func forms(of secret: String) -> [String] {
        var encoded = ""
        for byte in secret.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if c.isASCII && (c.isLetter || c.isNumber || "-._~".contains(c)) {
                encoded.append(c)
            } else {
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        let escapedSlashes = secret.replacingOccurrences(of: "/", with: "\\/")
        return Array(Set([secret, encoded, escapedSlashes])).sorted { $0.count > $1.count }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
