/// Text as people read it: control characters shown as escapes, so that a value cannot rewrite a terminal
/// (ESC sequences, carriage returns) or hide or forge a line of a plan under review (newlines, bidirectional
/// overrides).
///
/// Every human rendering (text and markdown plans, `show`, lane output, error lines) passes dynamic text
/// through `escaped`; JSON keeps values exact, as JSON escapes them itself.
public enum DisplayText {
    /// `text` with C0 and C1 control characters, DEL and Unicode's bidirectional controls written as Swift
    /// escapes: `\n`, `\r`, `\t`, and `\u{1B}` for the others. With `keepingNewlines`, `\n` stays a newline
    /// (for messages that span lines on purpose).
    public static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        // Fast path: almost all text is free of them; the bytes that can start one are few.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) else { return text }
        var output = ""
        output.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A where keepingNewlines: output.unicodeScalars.append(scalar)
            case 0x0A: output += "\\n"
            case 0x0D: output += "\\r"
            case 0x09: output += "\\t"
            case 0x00..<0x20, 0x7F, 0x80..<0xA0, 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C:
                output += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default:
                output.unicodeScalars.append(scalar)
            }
        }
        return output
    }
}
