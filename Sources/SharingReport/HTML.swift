import ShareKit

/// Escaping for HTML and XML text and attribute values, in one place: the console's pages and the HTML access
/// matrix (`escaped`), and lane reports' JUnit XML (`xml`).
public enum HTML {
    /// `&`, `<`, `>`, `"` and `'` as entities, and control characters as `DisplayText` shows them: text for
    /// people.
    public static func escaped(_ text: String) -> String {
        entities(DisplayText.escaped(text)) { scalar, out in out.unicodeScalars.append(scalar) }
    }

    /// XML 1.0 text for tools (a JUnit report): the same entities, tabs and line ends as character references
    /// (an attribute keeps them that way), and the characters XML 1.0 cannot hold dropped. `keepingNewlines`
    /// writes line ends as they are, for an element's text that people read (a step's output).
    public static func xml(_ text: String, keepingNewlines: Bool = false) -> String {
        entities(text) { scalar, out in
            switch scalar {
            case "\n" where keepingNewlines: out += "\n"
            case "\t", "\n", "\r": out += "&#\(scalar.value);"
            default:
                if scalar.value >= 0x20 && !(0xFFFE...0xFFFF).contains(scalar.value) {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
    }

    /// The five characters markup gives meaning to as entities; every other scalar as `other` writes it.
    private static func entities(_ text: String, other: (Unicode.Scalar, inout String) -> Void) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: other(scalar, &out)
            }
        }
        return out
    }
}
