import Foundation
import Testing

/// The table of the reference's dictionaries kept in the repository (Docs/Reference/Dictionaries.json) and a
/// checker of answers against it: every key a dictionary always holds present, every key one that the table
/// documents (or marks as serve's own), each value of its documented type, enum words from their sets,
/// opaque strings base64, error codes from the reference's list.
struct ReferenceTable: Sendable {
    struct Key: Sendable {
        var key: String
        var type: String
        /// `always`, `unlessDeleted`, `sometimes` or `request`.
        var presence: String
        var note: String?
        var serve: String?
        var source: String?
    }

    /// One dictionary of the table: its keys.
    struct Shape: Sendable {
        var name: String
        var title: String
        var source: String
        var keys: [Key]
        var note: String?
        /// The dictionary an entry is instead when it carries `serverErrorCode`.
        var errorForm: String?
    }

    struct Endpoint: Sendable {
        var path: String
        var page: String
        var answer: String
        var errors: [String]
        var strict: String
    }

    struct Deviation: Sendable {
        var place: String
        var reference: String
        var serve: String
        var evidence: String
    }

    var about: String
    var sources: [(name: String, url: String)]
    var enums: [(name: String, values: [String], source: String, note: String?)]
    var dictionaries: [Shape]
    var endpoints: [Endpoint]
    var deviations: [Deviation]
    /// Where serve falls short of the reference, not on purpose.
    var gaps: [Deviation]

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Docs/Reference")

    /// The table as the repository keeps it.
    static func load() throws -> ReferenceTable {
        let data = try Data(contentsOf: folder.appendingPathComponent("Dictionaries.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        func strings(_ value: Any?) -> [String] { value as? [String] ?? [] }
        let sources = (root["sources"] as? [String: String] ?? [:]).sorted { $0.key < $1.key }.map {
            (name: $0.key, url: $0.value)
        }
        let enums = (root["enums"] as? [String: [String: Any]] ?? [:]).sorted { $0.key < $1.key }.map {
            (
                name: $0.key, values: strings($0.value["values"]), source: $0.value["source"] as? String ?? "",
                note: $0.value["note"] as? String
            )
        }
        let dictionaries = (root["dictionaries"] as? [[String: Any]] ?? []).map { entry in
            Shape(
                name: entry["name"] as? String ?? "", title: entry["title"] as? String ?? "",
                source: entry["source"] as? String ?? "",
                keys: (entry["keys"] as? [[String: Any]] ?? []).map { key in
                    Key(
                        key: key["key"] as? String ?? "", type: key["type"] as? String ?? "",
                        presence: key["presence"] as? String ?? "", note: key["note"] as? String,
                        serve: key["serve"] as? String, source: key["source"] as? String)
                },
                note: entry["note"] as? String, errorForm: entry["errorForm"] as? String)
        }
        let endpoints = (root["endpoints"] as? [[String: Any]] ?? []).map { entry in
            Endpoint(
                path: entry["path"] as? String ?? "", page: entry["page"] as? String ?? "",
                answer: entry["answer"] as? String ?? "", errors: strings(entry["errors"]),
                strict: entry["strict"] as? String ?? "")
        }
        func differences(_ key: String) -> [Deviation] {
            (root[key] as? [[String: String]] ?? []).map {
                Deviation(
                    place: $0["where"] ?? "", reference: $0["reference"] ?? "", serve: $0["serve"] ?? "",
                    evidence: $0["evidence"] ?? "")
            }
        }
        return ReferenceTable(
            about: root["about"] as? String ?? "", sources: sources, enums: enums, dictionaries: dictionaries,
            endpoints: endpoints, deviations: differences("deviations"), gaps: differences("gaps"))
    }

    func dictionary(_ name: String) -> Shape? { dictionaries.first { $0.name == name } }
    func endpoint(_ path: String) -> Endpoint? { endpoints.first { $0.path == path } }
    func enumValues(_ name: String) -> [String]? { enums.first { $0.name == name }?.values }

    // MARK: - Checking

    /// What is wrong with `value` as a `type` of the table (`dict:Zone`, `array:dict:Record`, `enum:permission`,
    /// `opaque`, …), each problem with its place (`zones[0].syncToken`); none when it conforms.
    func problems(_ value: JSONValue, as type: String, at path: String) -> [String] {
        if type == "any" { return [] }
        if type.hasPrefix("array:") {
            guard case .array(let elements) = value else { return ["\(path): not an array (\(value.kind))"] }
            let element = String(type.dropFirst("array:".count))
            return elements.enumerated().flatMap { problems($1, as: element, at: "\(path)[\($0)]") }
        }
        if type.hasPrefix("dict:") {
            return problems(value, dictionary: String(type.dropFirst("dict:".count)), at: path)
        }
        if type.hasPrefix("enum:") {
            let name = String(type.dropFirst("enum:".count))
            guard case .string(let word) = value else { return ["\(path): not a string for \(name) (\(value.kind))"] }
            guard let values = enumValues(name) else { return ["\(path): the table has no enum \(name)"] }
            return values.contains(word) ? [] : ["\(path): \"\(word)\" is not one of \(name)'s \(values)"]
        }
        switch (type, value) {
        case ("string", .string), ("boolean", .bool), ("integer", .integer), ("number", .integer),
            ("number", .number), ("object", .object):
            return []
        case ("opaque", .string(let text)):
            return Data(base64Encoded: text) != nil && !text.isEmpty
                ? [] : ["\(path): \"\(text)\" is not base64, as Apple's opaque strings are"]
        case ("fields", .object(let fields)):
            return fields.sorted { $0.key < $1.key }.flatMap {
                problems($0.value, dictionary: "RecordField", at: "\(path).\($0.key)")
            }
        default:
            return ["\(path): not \(type) (\(value.kind))"]
        }
    }

    private func problems(_ value: JSONValue, dictionary name: String, at path: String) -> [String] {
        guard case .object(let members) = value else { return ["\(path): not a dictionary (\(value.kind))"] }
        guard var dictionary = self.dictionary(name) else {
            return ["\(path): the table has no dictionary \(name)"]
        }
        if members["serverErrorCode"] != nil, let errorForm = dictionary.errorForm {
            guard let form = self.dictionary(errorForm) else { return ["\(path): no dictionary \(errorForm)"] }
            dictionary = form
        }
        var found: [String] = []
        let deleted = members["deleted"] == .bool(true)
        for key in dictionary.keys {
            let required = key.presence == "always" || (key.presence == "unlessDeleted" && !deleted)
            guard let member = members[key.key] else {
                if required { found.append("\(path): \(dictionary.title) lacks \(key.key)") }
                continue
            }
            if key.presence == "request" {
                found.append("\(path).\(key.key): a request key of \(dictionary.title), never answered")
                continue
            }
            if member == .null, !required { continue }
            found += problems(member, as: key.type, at: "\(path).\(key.key)")
        }
        for member in members.keys.sorted() where !dictionary.keys.contains(where: { $0.key == member }) {
            found.append("\(path).\(member): not a key of \(dictionary.title), nor one the table marks as serve's")
        }
        return found
    }

    // MARK: - The rendered table

    /// Docs/Reference/Dictionaries.md, written from the table.
    func markdown() -> String {
        var lines: [String] = [
            "# The reference's dictionaries, as `sharelane serve` answers them", "",
            "<!-- Written from Dictionaries.json by ReferenceConformanceTests (RECORD_GOLDEN=1 rewrites it); edit the JSON. -->",
            "", about, "",
        ]
        lines += sources.map { "- \($0.name): <\($0.url)>" }
        lines += [
            "", "## Endpoints", "", "| endpoint | answer | error codes | what a strict client can rely on |",
            "|---|---|---|---|",
        ]
        for endpoint in endpoints {
            let anchor = Self.anchor(endpoint.path)
            lines.append(
                "| <a id=\"\(anchor)\"></a>`\(endpoint.path)` (\(endpoint.page)) | [\(endpoint.answer)](#\(endpoint.answer.lowercased())) | "
                    + endpoint.errors.map { "`\($0)`" }.joined(separator: ", ") + " | \(endpoint.strict) |")
        }
        lines += ["", "## Dictionaries", ""]
        for dictionary in dictionaries {
            lines += ["### \(dictionary.name)", "", "\(dictionary.title) (\(dictionary.source))."]
            if let errorForm = dictionary.errorForm {
                lines.append("An entry with `serverErrorCode` is a [\(errorForm)](#\(errorForm.lowercased())) instead.")
            }
            if let note = dictionary.note { lines.append(note) }
            lines += ["", "| key | type | presence | notes |", "|---|---|---|---|"]
            for key in dictionary.keys {
                let notes = [key.note, key.source.map { "from \($0)" }, key.serve.map { "**\($0)**" }]
                    .compactMap { $0 }.joined(separator: "; ")
                lines.append("| `\(key.key)` | \(Self.typeText(key.type)) | \(key.presence) | \(notes) |")
            }
            lines.append("")
        }
        lines += ["## Enumerations", "", "| enum | values | source |", "|---|---|---|"]
        for entry in enums {
            let note = entry.note.map { "; \($0)" } ?? ""
            lines.append(
                "| <a id=\"enum-\(entry.name.lowercased())\"></a>\(entry.name) | "
                    + entry.values.map { "`\($0)`" }.joined(separator: ", ") + " | \(entry.source)\(note) |")
        }
        lines += [
            "", "## Where serve follows the live service or a client over the reference", "",
            "| where | the reference | serve | evidence |", "|---|---|---|---|",
        ]
        lines += deviations.map { "| \($0.place) | \($0.reference) | \($0.serve) | \($0.evidence) |" }
        lines += [
            "", "## Where serve falls short of the reference", "", "| where | the reference | serve | why |",
            "|---|---|---|---|",
        ]
        lines += gaps.map { "| \($0.place) | \($0.reference) | \($0.serve) | \($0.evidence) |" }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The anchor of an endpoint's row: `endpoint-records-modify`.
    static func anchor(_ path: String) -> String { "endpoint-" + path.replacingOccurrences(of: "/", with: "-") }

    private static func typeText(_ type: String) -> String {
        if type.hasPrefix("array:") { return "array of " + typeText(String(type.dropFirst("array:".count))) }
        if type.hasPrefix("dict:") {
            let name = String(type.dropFirst("dict:".count))
            return "[\(name)](#\(name.lowercased()))"
        }
        if type.hasPrefix("enum:") {
            let name = String(type.dropFirst("enum:".count))
            return "[\(name)](#enum-\(name.lowercased()))"
        }
        return type
    }
}

/// A JSON value that tells a boolean from a number and an integer from a fraction, as a strict client reads
/// them.
indirect enum JSONValue: Decodable, Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? single.decode(Double.self) {
            self = .number(value)
        } else if let value = try? single.decode(String.self) {
            self = .string(value)
        } else if let value = try? single.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try single.decode([String: JSONValue].self))
        }
    }

    static func parse(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer: "an integer"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "a dictionary"
        }
    }

    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var array: [JSONValue] {
        if case .array(let elements) = self { return elements }
        return []
    }
}
