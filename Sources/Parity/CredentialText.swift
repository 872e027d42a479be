import Foundation

/// Finds credentials written inside text, where a recording proxy meets them besides the places Web Services
/// sends them: a query or form (`ckWebAuthToken=…`, the console's `token=…`), a script's JSON
/// (`{"ckSession":"…"}`, CloudKit JS's sign-in popup), an HTML form's hidden input, and a sign-in page's
/// `<code>` that shows a token to paste.
///
/// Each finder returns the value as it reads decoded (percent-, JSON- or HTML-escaped) and as it is written,
/// so that both are masked.
enum CredentialText {
    /// A credential found inside text: its value, and how the text writes it.
    struct Found: Equatable {
        var value: String
        var written: String
    }

    /// The values of `name=VALUE` in a query, a form body or a URL inside other text.
    static func parameterValues(named name: String, in text: String) -> [Found] {
        var found: [Found] = []
        var searchStart = text.startIndex
        let marker = name + "="
        while let range = text.range(of: marker, range: searchStart..<text.endIndex) {
            searchStart = range.upperBound
            // `syncToken=` is not `token=`: the name starts the text or follows a separator.
            if range.lowerBound > text.startIndex {
                let before = text[text.index(before: range.lowerBound)]
                guard "?&;,( \t\r\n\"'".contains(before) else { continue }
            }
            let value = text[range.upperBound...].prefix { !"&#;\"'<> \t\r\n\\".contains($0) }
            guard !value.isEmpty else { continue }
            found.append(Found(value: String(value).removingPercentEncoding ?? String(value), written: String(value)))
        }
        return found
    }

    /// The string values of `"key": "VALUE"` in JSON written inside other text (a page's script).
    static func jsonStringValues(key: String, in text: String) -> [Found] {
        var found: [Found] = []
        var searchStart = text.startIndex
        let marker = "\"" + key + "\""
        while let range = text.range(of: marker, range: searchStart..<text.endIndex) {
            searchStart = range.upperBound
            var rest = text[range.upperBound...].drop { $0.isWhitespace }
            guard rest.first == ":" else { continue }
            rest = rest.dropFirst().drop { $0.isWhitespace }
            guard rest.first == "\"" else { continue }
            rest = rest.dropFirst()
            var raw = ""
            var escaped = false
            for character in rest {
                if escaped {
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    break
                }
                raw.append(character)
            }
            guard !raw.isEmpty else { continue }
            found.append(Found(value: jsonUnescaped(raw), written: raw))
        }
        return found
    }

    /// The `value` of every `<input>` named `name` (`<input type="hidden" name="token" value="…">`).
    static func inputValues(named name: String, in text: String) -> [Found] {
        var found: [Found] = []
        for marker in ["name=\"\(name)\"", "name='\(name)'"] {
            var searchStart = text.startIndex
            while let range = text.range(of: marker, range: searchStart..<text.endIndex) {
                searchStart = range.upperBound
                let tagStart = text[..<range.lowerBound].lastIndex(of: "<") ?? text.startIndex
                let tagEnd = text[range.upperBound...].firstIndex(of: ">") ?? text.endIndex
                let tag = text[tagStart..<tagEnd]
                for quote in ["\"", "'"] {
                    guard let value = tag.range(of: "value=" + quote) else { continue }
                    let raw = tag[value.upperBound...].prefix { String($0) != quote }
                    guard !raw.isEmpty else { continue }
                    found.append(Found(value: htmlUnescaped(String(raw)), written: String(raw)))
                }
            }
        }
        return found
    }

    /// The text of every `<code>` element that reads as a token: one word of at least 16 characters (the sign-in
    /// page shows the token to paste this way; its other code elements are commands, with spaces, or shorter).
    static func codeValues(in text: String) -> [Found] {
        var found: [Found] = []
        var searchStart = text.startIndex
        while let open = text.range(of: "<code>", range: searchStart..<text.endIndex),
            let close = text.range(of: "</code>", range: open.upperBound..<text.endIndex)
        {
            searchStart = close.upperBound
            let raw = String(text[open.upperBound..<close.lowerBound])
            let value = htmlUnescaped(raw)
            guard value.count >= 16, !value.contains(where: { $0.isWhitespace || $0 == "<" }) else { continue }
            found.append(Found(value: value, written: raw))
        }
        return found
    }

    /// The values of a `Cookie` header (`a=1; b=2`) or of a `Set-Cookie` header's cookie (`a=1; Path=/`).
    static func cookieValues(_ header: String, setCookie: Bool) -> [String] {
        let pairs = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        return (setCookie ? Array(pairs.prefix(1)) : pairs).compactMap { pair in
            guard let equals = pair.firstIndex(of: "=") else { return nil }
            let value = pair[pair.index(after: equals)...].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            return value.isEmpty ? nil : value
        }
    }

    /// Whether a value reads as an opaque secret (a session ID, a token): long, and only the characters of
    /// hex, base64 and percent-encoding. A cookie that remembers a choice (`iCloud.example.App/development`)
    /// does not, and is masked only in its own header.
    static func isOpaque(_ value: String) -> Bool {
        value.count >= 16
            && value.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "+/=_-%".unicodeScalars.contains($0))
            }
    }

    /// `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#39;` and numeric references decoded.
    static func htmlUnescaped(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            rest = rest[ampersand...]
            guard let semicolon = rest.prefix(10).firstIndex(of: ";") else {
                result.append("&")
                rest = rest.dropFirst()
                continue
            }
            let entity = rest[rest.index(after: rest.startIndex)..<semicolon]
            let named = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
            if let character = named[String(entity)] {
                result += character
            } else if entity.hasPrefix("#x") || entity.hasPrefix("#X"),
                let code = UInt32(entity.dropFirst(2), radix: 16),
                let scalar = Unicode.Scalar(code)
            {
                result.unicodeScalars.append(scalar)
            } else if entity.hasPrefix("#"), let code = UInt32(entity.dropFirst()), let scalar = Unicode.Scalar(code) {
                result.unicodeScalars.append(scalar)
            } else {
                result += rest[...semicolon]
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }

    /// A JSON string's escapes (`\/`, `\"`, `\\`, `\uXXXX`) decoded.
    static func jsonUnescaped(_ raw: String) -> String {
        guard raw.contains("\\") else { return raw }
        return (JSONValue.parse(Data("\"\(raw)\"".utf8))?.stringValue) ?? raw.replacingOccurrences(of: "\\/", with: "/")
    }
}
