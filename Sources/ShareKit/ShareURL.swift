/// A share's URL: `https://www.icloud.com/share/` and the share's short GUID (`ShortGUID`), written and
/// read back.
public enum ShareURL {
    /// The URL a participant opens to accept the share with this short GUID.
    public static func url(shortGUID: String) -> String {
        prefix + shortGUID
    }

    /// Every share URL begins with this.
    public static let prefix = "https://www.icloud.com/share/"

    /// The short GUID in a share URL, or the argument itself when it is a bare short GUID.
    /// The URL's path is cut at its query or fragment (`?`, `#`) and its trailing slashes; the GUID is the
    /// last segment. Read as UTF-8 bytes: `String.contains` of a string goes through `NSString`, and that cost
    /// a quarter of accepting a share (a thousand acceptances an apply of the benchmark).
    public static func shortGUID(from url: String) -> String {
        let trimmed = WhiteSpace.trimmed(url)
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
}
