/// How a JSON string is escaped, in one place: the JSON plan (`PlanModel/JSONPlanRenderer`) and the hand-written
/// wire bodies (`CloudKitWire/HandJSON/WireRecordWriter`) both ask it, so the same text is the same JSON in
/// both. Quotes, backslashes and control characters are escaped, with the short forms RFC 8259 names (`\b`,
/// `\f`, `\n`, `\r`, `\t`) and `\u00XX` for the others; `/` and everything else is written as UTF-8.
public enum JSONString {
    /// Whether this byte of UTF-8 must be escaped inside a JSON string.
    @inlinable
    public static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// The escape of a byte that `needsEscape`, as ASCII bytes (`\n`, `\u001f`).
    public static func escape(_ byte: UInt8) -> [UInt8] {
        switch byte {
        case UInt8(ascii: "\""): return Array(#"\""#.utf8)
        case UInt8(ascii: "\\"): return Array(#"\\"#.utf8)
        case 0x08: return Array(#"\b"#.utf8)
        case 0x0C: return Array(#"\f"#.utf8)
        case 0x0A: return Array(#"\n"#.utf8)
        case 0x0D: return Array(#"\r"#.utf8)
        case 0x09: return Array(#"\t"#.utf8)
        default:
            let hex = Array("0123456789abcdef".utf8)
            return Array(#"\u00"#.utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
        }
    }

    /// `text` as it stands between a JSON string's quotes: itself when nothing in it needs an escape.
    public static func escaped(_ text: String) -> String {
        guard text.utf8.contains(where: needsEscape) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            if needsEscape(byte) { bytes += escape(byte) } else { bytes.append(byte) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` as a JSON string literal, quotes included.
    public static func quoted(_ text: String) -> String { "\"" + escaped(text) + "\"" }
}
