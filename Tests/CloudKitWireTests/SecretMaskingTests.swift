import Foundation
import Testing

@testable import CloudKitWire

/// Every answer is searched for the tokens its request carried, and any it holds is masked before anything
/// reads or logs it.
@Suite("Masking tokens in answers")
struct SecretMaskingTests {
    /// The byte search finds a token wherever it is, and only where all of it is.
    @Test func theSearchFindsATokenAnywhereAndOnlyWhole() {
        let token = Array("tok-3f9a".utf8)
        for (text, found) in [
            ("tok-3f9a", true), ("xtok-3f9a", true), ("tok-3f9ay", true), (#"{"t":"a tok-3f9a b"}"#, true),
            ("tok-3f9", false), ("ttok-3f9", false), ("", false), ("tok-3f9b tok-3f9", false),
            ("tttttok-3f9a", true), ("ok-3f9a", false),
        ] {
            #expect(WebServicesTransport.contains(token, in: Data(text.utf8)) == found, "\(text)")
        }
        #expect(WebServicesTransport.contains([], in: Data()))
    }

    /// An answer that echoes a token, plainly or percent-encoded, comes back with it masked; one without any
    /// comes back as it was.
    @Test func anAnswerEchoingATokenIsMasked() {
        let secret = "3f9a/secret+token=="
        let plain = Data(#"{"webAuthToken":"3f9a\/secret+token=="}"#.utf8)
        let masked = String(decoding: WebServicesTransport.masking([secret], in: plain), as: UTF8.self)
        #expect(!masked.contains("secret+token"))
        let encoded = Data("next=3f9a%2Fsecret%2Btoken%3D%3D".utf8)
        #expect(
            !String(decoding: WebServicesTransport.masking([secret], in: encoded), as: UTF8.self).contains("secret"))
        let clean = Data(#"{"records":[]}"#.utf8)
        #expect(WebServicesTransport.masking([secret], in: clean) == clean)
        // The part every form of the token begins with, and none of the forms.
        let near = Data(#"{"recordName":"3f9a/secret+tokens"}"#.utf8)
        #expect(WebServicesTransport.masking([secret], in: near) == near)
        let raw = Data("token 3f9a/secret+token== at the end".utf8)
        #expect(!String(decoding: WebServicesTransport.masking([secret], in: raw), as: UTF8.self).contains("secret"))
    }
}
