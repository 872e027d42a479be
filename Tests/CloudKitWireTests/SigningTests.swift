import CloudKitWire
import Crypto
import Foundation
import Testing

/// A throwaway P-256 key made for this test with `openssl ecparam -name prime256v1 -genkey -noout`.
private let testKeyPEM = """
    -----BEGIN EC PRIVATE KEY-----
    MHcCAQEEINjrWam312vUByzi5hSwwOR45JKHwtXAU1t4bxqlRiaVoAoGCCqGSM49
    AwEHoUQDQgAEbNSGuXXUvUXDzs1NDj6K+PEIL6jgCrN+QirJEIgZprWDx10BpAph
    PwyxU3i7Bv+b5HtIFWHfYC/k5AVrf4zXXQ==
    -----END EC PRIVATE KEY-----
    """

@Suite struct SigningTests {
    let date = Date(timeIntervalSince1970: 1_453_760_143)  // 2016-01-25T22:15:43Z
    let body = Data(#"{"query":{"recordType":"MyUser"}}"#.utf8)
    let subpath = "/database/1/iCloud.com.example.Lists/development/public/records/query"

    @Test func theSignedStringIsDateBodyHashAndSubpath() {
        // The body hash was computed independently: printf '%s' BODY | openssl dgst -sha256 -binary | base64
        #expect(
            RequestSigner.message(date: date, body: body, subpath: subpath)
                == "2016-01-25T22:15:43Z:fmRdaIlycfGtEN9er6PGz8NnR3nmdmwftqu5aSn9KrA=:"
                + "/database/1/iCloud.com.example.Lists/development/public/records/query")
    }

    @Test func theSignatureVerifiesWithThePublicKey() throws {
        let signer = try RequestSigner(keyID: "abc123", pem: testKeyPEM)
        let headers = try signer.headers(date: date, body: body, subpath: subpath)
        #expect(
            headers.map(\.name) == [
                "X-Apple-CloudKit-Request-KeyID", "X-Apple-CloudKit-Request-ISO8601Date",
                "X-Apple-CloudKit-Request-SignatureV1",
            ])
        #expect(headers[0].value == "abc123")
        #expect(headers[1].value == "2016-01-25T22:15:43Z")
        let der = try #require(Data(base64Encoded: headers[2].value))
        let signature = try P256.Signing.ECDSASignature(derRepresentation: der)
        let message = Data(RequestSigner.message(date: date, body: body, subpath: subpath).utf8)
        #expect(signer.publicKey.isValidSignature(signature, for: message))
        // The same signature must not pass for another body or another path.
        let otherBody = Data(RequestSigner.message(date: date, body: Data("{}".utf8), subpath: subpath).utf8)
        #expect(!signer.publicKey.isValidSignature(signature, for: otherBody))
        let otherPath = Data(RequestSigner.message(date: date, body: body, subpath: subpath + "x").utf8)
        #expect(!signer.publicKey.isValidSignature(signature, for: otherPath))
    }

    @Test func aKeyFileWithParametersBlockIsRead() throws {
        let withParameters =
            "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n" + testKeyPEM
        let signer = try RequestSigner(keyID: "k", pem: withParameters)
        #expect(signer.description == "server-to-server key k")
        #expect(!"\(signer)".contains("MHcC"))
    }

    @Test func aBadKeyIsRefusedWithTheRemedy() {
        #expect {
            try RequestSigner(keyID: "k", pem: "not a key")
        } throws: { error in
            "\(error)".contains("openssl ecparam")
        }
    }
}
