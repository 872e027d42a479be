import Foundation

/// Deterministic names the stores hand out, so that a recipe gives the same data on every machine.
///
/// The names come from a 128-bit FNV-1a hash: stable across runs, platforms and Swift versions (unlike
/// `Hasher`), and cheap. It is not a security measure: nothing secret is derived from it.
public enum StableName {
    /// The user record name for an email address: `_` and 32 hex digits of the hash of its normalized form
    /// (`EmailAddress.normalized`), so the same person gets the same record name in every local store.
    public static func userRecordName(email: String) -> UserRecordName {
        "_" + fnv1a128Hex(EmailAddress.normalized(email))
    }

    /// `text` without the white space and line breaks at its ends: the scalars Foundation's
    /// `.whitespacesAndNewlines` holds (Unicode's White_Space, and U+200B ZERO WIDTH SPACE), without
    /// Foundation's detour through NSString, which cost 4% of a small apply (a thousand share URLs and e-mail
    /// addresses).
    public static func trimmedWhitespace(_ text: String) -> String {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isWhitespace || scalar.value == 0x200B }
        let scalars = text.unicodeScalars
        guard let first = scalars.first, let last = scalars.last else { return text }
        if !isSpace(first) && !isSpace(last) { return text }
        guard let start = scalars.firstIndex(where: { !isSpace($0) }),
            let end = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(scalars[start...end])
    }

    /// The record name of the hierarchy share rooted at `rootRecordName` in the zone `zoneName`.
    public static func hierarchyShareRecordName(zoneName: String, rootRecordName: String) -> String {
        "share-" + fnv1a128Hex("\(zoneName)\u{0}\(rootRecordName)")
    }

    /// The URL a participant opens to accept the share with this short GUID.
    public static func shareURL(shortGUID: String) -> String {
        shareURLPrefix + shortGUID
    }

    /// Every share URL begins with this.
    public static let shareURLPrefix = "https://www.icloud.com/share/"

    /// The short GUID in a share URL, or the argument itself when it is a bare short GUID.
    /// The URL's path is cut at its query or fragment (`?`, `#`) and its trailing slashes; the GUID is the
    /// last segment. Read as UTF-8 bytes: `String.contains` of a string goes through `NSString`, and that cost
    /// a quarter of accepting a share (a thousand acceptances an apply of the benchmark).
    public static func shortGUID(fromURL url: String) -> String {
        let trimmed = trimmedWhitespace(url)
        let bytes = trimmed.utf8
        let slash = UInt8(ascii: "/")
        guard bytes.contains(slash) else { return trimmed }
        var end = bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        while end > bytes.startIndex, bytes[bytes.index(before: end)] == slash { end = bytes.index(before: end) }
        let path = bytes[..<end]
        guard !path.isEmpty else { return trimmed }
        let start = path.lastIndex(of: slash).map { bytes.index(after: $0) } ?? path.startIndex
        // The cuts are at ASCII bytes, so the segment is whole UTF-8.
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// 32 lowercase hex digits of the 128-bit FNV-1a hash of the UTF-8 bytes of `text`.
    public static func fnv1a128Hex(_ text: String) -> String {
        // Offset basis 0x6c62272e07bb014262b821756295c58d; prime 2^88 + 0x13b.
        var hi: UInt64 = 0x6c62_272e_07bb_0142
        var lo: UInt64 = 0x62b8_2175_6295_c58d
        for byte in text.utf8 {
            lo ^= UInt64(byte)
            // (hi·2^64 + lo) · (2^88 + 0x13b) mod 2^128
            let (carry, low) = lo.multipliedFullWidth(by: 0x13b)
            let high = hi &* 0x13b &+ carry &+ (lo << 24)
            hi = high
            lo = low
        }
        return hi.sixteenHexDigits + lo.sixteenHexDigits
    }
}
