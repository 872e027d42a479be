import Foundation

/// A JSON value as a case file holds it: the bodies of CloudKit's requests and answers, compared key by key.
///
/// Integers and other numbers are kept apart so that a file written back keeps `1` as `1`; they compare as
/// one type, numbers, as JSON has only one.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The value's type as a difference names it.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "a list"
        case .object: "an object"
        }
    }

    /// Whether two values are of one JSON type (numbers are one type).
    func hasSameType(as other: JSONValue) -> Bool { typeName == other.typeName }

    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The elements of a list; none for any other value.
    public var elements: [JSONValue] {
        if case .array(let elements) = self { return elements }
        return []
    }

    /// The value as JSON text, keys sorted, slashes not escaped.
    public func jsonText(pretty: Bool = false) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    /// Reads JSON text.
    /// - Throws: the decoder's error when it is not JSON.
    public static func parse(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    /// Reads JSON text; nil when it is not JSON.
    public static func parse(_ data: Data) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Reads JSON text, or throws where it stops being JSON.
    /// - Throws: `ParityError.damaged` naming `file` with the line and column when the decoder gives them.
    static func parse(_ data: Data, file: String) throws -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            let (line, column, reason) = Self.location(of: error, in: data)
            throw ParityError.damaged(file: file, line: line, column: column, reason: reason)
        }
    }

    /// Where JSON text stops being JSON, as a 1-based line and column (the decoder names only the character's
    /// offset, which Foundation's older parser gives).
    private static func location(of error: Error, in data: Data) -> (Int?, Int?, String) {
        var description = ""
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch let parsing as NSError {
            description = parsing.userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(parsing)"
        }
        guard let range = description.range(of: #"character [0-9]+"#, options: .regularExpression),
            let offset = Int(description[range].dropFirst(10))
        else { return (nil, nil, "not valid JSON") }
        let prefix = data.prefix(max(0, min(offset, data.count)))
        let line = prefix.count { $0 == 10 } + 1
        let column = prefix.count - (prefix.lastIndex(of: 10).map { $0 - prefix.startIndex + 1 } ?? 0) + 1
        let what = description.split(separator: " around").first.map(String.init) ?? "Invalid JSON"
        return (line, column, what.prefix(1).lowercased() + what.dropFirst() + " here, not valid JSON")
    }
}

// MARK: - Codable

extension JSONValue: Codable {
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
