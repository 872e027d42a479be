import Foundation
import ShareKit
import Yams

/// Writes recipe YAML by hand, because Yams' emitter drops the local tags (`!ref`, `!bytes`,
/// `!share-url`) that recipes use. Strings are written plain where YAML reads them back as the same string,
/// and double-quoted (JSON escapes) otherwise.
struct RecipeWriter {
    private(set) var lines: [String] = []

    var text: String { lines.joined(separator: "\n") + "\n" }

    mutating func line(_ indent: Int, _ text: String) {
        lines.append(String(repeating: "  ", count: indent) + text)
    }

    mutating func comment(_ text: String) { lines.append("# \(text)") }

    mutating func blank() { lines.append("") }

    /// A scalar that reads back as the string `s`, variables and templates included: `${` is written `$${`
    /// and `{{` as `{{"{{"}}`, so that the loader gives back the text, not an expansion.
    static func string(_ s: String) -> String {
        var s = s
        if s.contains("${") { s = s.replacingOccurrences(of: "${", with: "$${") }
        if s.contains("{{") { s = s.replacingOccurrences(of: "{{", with: "{{\"{{\"}}") }
        let safe = s.range(of: #"^[A-Za-z0-9_][A-Za-z0-9_ .@/+-]*$"#, options: .regularExpression) != nil
            && !s.hasSuffix(" ")
            && Resolver.default.resolveTag(of: Node.scalar(.init(s))) == .str
        if safe { return s }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        if let data = try? encoder.encode(s), let quoted = String(data: data, encoding: .utf8) { return quoted }
        return "\"\(s)\""
    }

    /// A key: a record, field, zone or user name.
    static func key(_ s: String) -> String { string(s) }

    /// The YAML of a field value, as a recipe declares it; `shareURLs` maps live share URLs to their
    /// `ZONE[/RECORD]` path so that they come back as `!share-url`.
    static func value(_ value: FieldValue, zone: String, shareURLs: [String: String]) -> String {
        switch value {
        case .string(let s):
            if let path = shareURLs[s] { return "!share-url \(string(path))" }
            return string(s)
        case .int64(let i):
            return String(i)
        case .double(let d):
            if d.isNaN { return ".nan" }
            if d.isInfinite { return d < 0 ? "-.inf" : ".inf" }
            let text = String(d)
            return Resolver.default.resolveTag(of: Node.scalar(.init(text))) == .float
                ? text : "{type: DOUBLE, value: \(string(text))}"
        case .timestamp(let ms):
            return timestamp(ms)
        case .bytes(let data):
            return "!bytes \(data.base64EncodedString())"
        case .reference(let reference):
            // A reference that names its zone keeps naming it, even its own: the value compares with its zone.
            if reference.zoneID == nil && reference.action == .none { return "!ref \(string(reference.recordName))" }
            var parts = ["ref: \(string(reference.recordName))"]
            if let other = reference.zoneID?.zoneName { parts.append("zone: \(string(other))") }
            if reference.action != .none {
                parts.append("action: \(reference.action == .deleteSelf ? "delete-self" : "validate")")
            }
            return "{" + parts.joined(separator: ", ") + "}"
        case .assetID(let id):
            return "{type: ASSETID, value: \(string(id))}"
        case .location(let location):
            var parts = ["latitude: \(location.latitude)", "longitude: \(location.longitude)"]
            let optional: [(String, Double?)] = [
                ("altitude", location.altitude), ("horizontal_accuracy", location.horizontalAccuracy),
                ("vertical_accuracy", location.verticalAccuracy), ("speed", location.speed),
                ("course", location.course),
            ]
            for (key, number) in optional { if let number { parts.append("\(key): \(number)") } }
            if let ms = location.timestamp { parts.append("timestamp: \(timestamp(ms))") }
            return "{" + parts.joined(separator: ", ") + "}"
        case .list(let element, let values):
            if values.isEmpty { return "{type: \(element.listType?.rawValue ?? "STRING_LIST"), value: []}" }
            return "[" + values.map { Self.value($0, zone: zone, shareURLs: shareURLs) }.joined(separator: ", ") + "]"
        }
    }

    /// `2024-05-01T09:00:00Z`, with milliseconds when there are any.
    static func timestamp(_ ms: Int64) -> String {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = ms - seconds * 1000
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        let base = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        guard millis != 0 else { return base }
        return String(base.dropLast()) + String(format: ".%03dZ", millis)
    }
}
