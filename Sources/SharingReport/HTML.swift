import ShareKit

/// Escaping for HTML text and attribute values.
public enum HTML {
    /// `&`, `<`, `>`, `"` and `'` as entities, and control characters as `DisplayText` shows them.
    public static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for character in DisplayText.escaped(text) {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
