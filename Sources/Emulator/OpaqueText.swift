import Foundation

/// The opaque strings serve hands out (`continuationMarker`, every `syncToken` and `metaSyncToken`) in the
/// form Apple's are: base64. Clients that keep them base64-decode them and encode them again to send them
/// back (a Swift client of Apple's service does), so a marker such as `w200` or a token such as `s1a.k2` must
/// be base64 on the wire. The store keeps its own form; this is the one translation, both ways.
enum OpaqueText {
    /// `raw` as written on the wire: the base64 of its UTF-8.
    static func written(_ raw: String) -> String {
        Data(raw.utf8).base64EncodedString()
    }

    /// A string a client sent back, in the store's form. One serve wrote before its strings were base64
    /// (`w200`, `s1a.k2`), kept by a client across an upgrade, is taken as it is: it is read as base64 only
    /// when it decodes to printable ASCII and is exactly what `written` makes of that, which a raw marker or
    /// token (never padded to a multiple of four, or holding a `.`) is not.
    static func read(_ sent: String) -> String {
        guard let data = Data(base64Encoded: sent), !data.isEmpty,
            data.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }),
            let text = String(data: data, encoding: .utf8), written(text) == sent
        else { return sent }
        return text
    }
}
