import Crypto
import Foundation
import ShareKit

/// The public halves of server-to-server keys, by key ID, and the check CloudKit makes of a signed request.
///
/// A signed request carries `X-Apple-CloudKit-Request-KeyID`, `…-ISO8601Date` and `…-SignatureV1`: the
/// base64 DER of an ECDSA P-256 SHA-256 signature of `DATE:BASE64(SHA256(BODY)):SUBPATH` (the message
/// `RequestSigner` signs). It passes when the key ID is known, the date is within `allowedSkew` of now, and
/// the signature verifies with that key over the body and path as received.
public struct ServerKeyring: Sendable {
    private var keys: [String: P256.Signing.PublicKey] = [:]
    /// How far a request's date may be from the server's clock, either way.
    public var allowedSkew: TimeInterval

    /// An empty keyring: every signed request is refused.
    public init(allowedSkew: TimeInterval = 600) {
        self.allowedSkew = allowedSkew
    }

    /// The key IDs held, sorted.
    public var keyIDs: [String] { keys.keys.sorted() }

    /// Adds a key from its PEM: a public key (`openssl ec -in eckey.pem -pubout`) or the private key itself,
    /// whose public half is kept.
    /// - Throws: `ShareError` (`BAD_REQUEST`) when the text is neither.
    public mutating func add(keyID: String, pem: String) throws {
        if let key = try? P256.Signing.PublicKey(pemRepresentation: Self.block(of: pem, labels: ["PUBLIC KEY"])) {
            keys[keyID] = key
            return
        }
        if let signer = try? RequestSigner(keyID: keyID, pem: pem) {
            keys[keyID] = signer.publicKey
            return
        }
        throw ShareError(
            .badRequest,
            "the key for \(keyID) is not a P-256 public key (or private key) in PEM form; make the public key "
                + "with `openssl ec -in eckey.pem -pubout -out eckey.pub.pem`")
    }

    /// Checks a signed request; nil when it passes, otherwise `AUTHENTICATION_FAILED` saying why.
    /// - Parameters:
    ///   - subpath: the request target as received, from `/database/1/…`: the path, and the query string when
    ///     the request has one. CloudKit JS signs its query (`?ckjsBuildVersion=…&ckjsVersion=…&clientId=…`)
    ///     as part of the path, and Apple's service accepts it; a client that sends no query signs the path.
    ///   - now: the server's clock.
    public func check(keyID: String?, date: String?, signature: String?, body: Data, subpath: String, now: Date)
        -> ShareError?
    {
        guard let keyID, !keyID.isEmpty, let date, !date.isEmpty, let signature, !signature.isEmpty else {
            return ShareError(
                .authenticationFailed,
                "a server-to-server request needs all three headers: \(WireSpelling.keyIDHeader), "
                    + "\(WireSpelling.dateHeader) and \(WireSpelling.signatureHeader)")
        }
        guard let key = keys[keyID] else {
            return ShareError(
                .authenticationFailed,
                keys.isEmpty
                    ? "this server holds no server-to-server key (start `sharelane serve` with --server-key KEY_ID=PEM)"
                    : "unknown server-to-server key ID \(keyID)")
        }
        guard let signed = Self.parseDate(date) else {
            return ShareError(
                .authenticationFailed,
                "\(WireSpelling.dateHeader) \"\(date)\" is not an ISO 8601 date such as 2016-01-25T22:15:43Z")
        }
        guard abs(signed.timeIntervalSince(now)) <= allowedSkew else {
            return ShareError(
                .authenticationFailed,
                "the request's date \(date) is more than \(Int(allowedSkew)) seconds from the server's clock "
                    + "(\(RequestSigner.iso8601(now))); sign each request when sending it")
        }
        guard let der = Data(base64Encoded: signature),
            let parsed = try? P256.Signing.ECDSASignature(derRepresentation: der)
        else {
            return ShareError(.authenticationFailed, "\(WireSpelling.signatureHeader) is not a base64 DER signature")
        }
        let message = "\(date):\(Data(SHA256.hash(data: body)).base64EncodedString()):\(subpath)"
        guard key.isValidSignature(parsed, for: Data(message.utf8)) else {
            return ShareError(
                .authenticationFailed,
                "the signature does not match the request (its date, body or path) for key \(keyID)")
        }
        return nil
    }

    /// Reads `2016-01-25T22:15:43Z` (fractional seconds and offsets are accepted too).
    static func parseDate(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }

    private static func block(of pem: String, labels: [String]) -> String {
        for label in labels {
            if let start = pem.range(of: "-----BEGIN \(label)-----"),
                let end = pem.range(of: "-----END \(label)-----", range: start.upperBound..<pem.endIndex)
            {
                return String(pem[start.lowerBound..<end.upperBound])
            }
        }
        return pem
    }
}
