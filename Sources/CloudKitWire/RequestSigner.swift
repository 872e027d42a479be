import Crypto
import Foundation
import ShareKit

/// Signs server-to-server requests with a P-256 key, as CloudKit Web Services checks them.
///
/// The signed message is `DATE:BASE64(SHA256(BODY)):SUBPATH`, where DATE is ISO 8601 without fractional
/// seconds and SUBPATH is the URL path from `/database/1/…` (no query). The signature is the base64 of the
/// DER form of an ECDSA P-256 SHA-256 signature of that message.
public struct RequestSigner: Sendable {
    /// The key ID from CloudKit Console (`CLOUDKIT_KEY_ID`); not a secret.
    public let keyID: String
    private let key: P256.Signing.PrivateKey

    /// - Parameter pem: a P-256 private key in PEM (`openssl ecparam -name prime256v1 -genkey -noout`);
    ///   an `EC PARAMETERS` block before the key is ignored.
    /// - Throws: `ShareError` (`AUTHENTICATION_FAILED`) when the key cannot be read.
    public init(keyID: String, pem: String) throws {
        self.keyID = keyID
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: Self.keyBlock(of: pem))
        } catch {
            throw ShareError(
                .authenticationFailed,
                "the server-to-server key is not a P-256 private key in PEM form; make one with "
                    + "`openssl ecparam -name prime256v1 -genkey -noout -out eckey.pem`")
        }
    }

    /// The public half, for checking signatures.
    public var publicKey: P256.Signing.PublicKey { key.publicKey }

    /// The message that is signed for a request.
    public static func message(date: Date, body: Data, subpath: String) -> String {
        let bodyHash = Data(SHA256.hash(data: body)).base64EncodedString()
        return "\(iso8601(date)):\(bodyHash):\(subpath)"
    }

    /// The three signing headers for a request, in a stable order.
    public func headers(date: Date, body: Data, subpath: String) throws -> [(name: String, value: String)] {
        let message = Self.message(date: date, body: body, subpath: subpath)
        let signature = try key.signature(for: Data(message.utf8))
        return [
            (WireSpelling.keyIDHeader, keyID),
            (WireSpelling.dateHeader, Self.iso8601(date)),
            (WireSpelling.signatureHeader, signature.derRepresentation.base64EncodedString()),
        ]
    }

    /// `2016-01-25T22:15:43Z`: ISO 8601 in UTC, no fractional seconds.
    public static func iso8601(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02dZ", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0,
            c.minute ?? 0, c.second ?? 0)
    }

    private static func keyBlock(of pem: String) -> String {
        for label in ["EC PRIVATE KEY", "PRIVATE KEY"] {
            if let start = pem.range(of: "-----BEGIN \(label)-----"),
                let end = pem.range(of: "-----END \(label)-----", range: start.upperBound..<pem.endIndex)
            {
                return String(pem[start.lowerBound..<end.upperBound])
            }
        }
        return pem
    }
}

// MARK: - CustomStringConvertible

extension RequestSigner: CustomStringConvertible, CustomDebugStringConvertible {
    /// Names the key ID only: the private key never appears in output.
    public var description: String { "server-to-server key \(keyID)" }
    public var debugDescription: String { description }
}
