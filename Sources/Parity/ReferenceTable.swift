import Foundation

/// The table of the reference's dictionaries kept in the repository (Docs/Reference/Dictionaries.json) and a
/// checker of answers against it: every key a dictionary always holds present, every key one that the table
/// documents (or marks as serve's own), each value of its documented type, enum words from their sets,
/// opaque strings base64, error codes from the reference's list.
public struct ReferenceTable: Sendable {
    public struct Key: Sendable {
        public var key: String
        public var type: String
        /// `always`, `unlessDeleted`, `sometimes` or `request`.
        public var presence: String
        public var note: String?
        public var serve: String?
        public var source: String?
        /// What published captures of Apple's live service show of this key, where the reference says otherwise
        /// or nothing (the capture wins).
        public var capture: String? = nil
    }

    /// One dictionary of the table: its keys.
    public struct Shape: Sendable {
        public var name: String
        public var title: String
        public var source: String
        public var keys: [Key]
        public var note: String?
        /// The dictionary an entry is instead when it carries `serverErrorCode`.
        public var errorForm: String?
    }

    public struct Endpoint: Sendable {
        public var path: String
        public var page: String
        public var answer: String
        public var errors: [String]
        public var strict: String

        /// Whether the endpoint is serve's own, not one of Apple's service (`users/settings`, `schema/…`).
        public var isServesOwn: Bool { page == "serve's own" }
    }

    public struct Deviation: Sendable {
        public var place: String
        public var reference: String
        public var serve: String
        public var evidence: String
    }

    public var about: String
    public var sources: [(name: String, url: String)]
    public var enums: [(name: String, values: [String], source: String, note: String?)]
    public var dictionaries: [Shape]
    public var endpoints: [Endpoint]
    public var deviations: [Deviation]
    /// Where serve falls short of the reference, not on purpose.
    public var gaps: [Deviation]

    /// The file name of the table, in Docs/Reference of a checkout.
    public static let fileName = "Dictionaries.json"

    /// Reads the table from its file.
    /// - Throws: `ParityError.badTable` naming the file when it cannot be read or is not the table.
    public static func load(from url: URL) throws -> ReferenceTable {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw ParityError.badTable(file: url.path, reason: "cannot be read")
        }
        guard let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            root["endpoints"] is [[String: Any]], root["dictionaries"] is [[String: Any]]
        else {
            throw ParityError.badTable(file: url.path, reason: "it is not the table of the reference's dictionaries")
        }
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
                        serve: key["serve"] as? String, source: key["source"] as? String,
                        capture: key["capture"] as? String)
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

    public func dictionary(_ name: String) -> Shape? { dictionaries.first { $0.name == name } }
    public func endpoint(_ path: String) -> Endpoint? { endpoints.first { $0.path == path } }
    public func enumValues(_ name: String) -> [String]? { enums.first { $0.name == name }?.values }

    // MARK: - Checking

    /// What is wrong with `value` as a `type` of the table (`dict:Zone`, `array:dict:Record`, `enum:permission`,
    /// `opaque`, …), each problem with its place (`zones[0].syncToken`); none when it conforms.
    public func problems(_ value: JSONValue, as type: String, at path: String) -> [String] {
        if type == "any" { return [] }
        if type.hasPrefix("array:") {
            guard case .array(let elements) = value else { return ["\(path): not an array (\(Self.kind(value)))"] }
            let element = String(type.dropFirst("array:".count))
            return elements.enumerated().flatMap { problems($1, as: element, at: "\(path)[\($0)]") }
        }
        if type.hasPrefix("dict:") {
            return problems(value, dictionary: String(type.dropFirst("dict:".count)), at: path)
        }
        if type.hasPrefix("enum:") {
            let name = String(type.dropFirst("enum:".count))
            guard case .string(let word) = value else {
                return ["\(path): not a string for \(name) (\(Self.kind(value)))"]
            }
            guard let values = enumValues(name) else { return ["\(path): the table has no enum \(name)"] }
            return values.contains(word) ? [] : ["\(path): \"\(word)\" is not one of \(name)'s \(values)"]
        }
        switch (type, value) {
        case ("string", .string), ("boolean", .bool), ("integer", .int), ("number", .int),
            ("number", .double), ("object", .object):
            return []
        case ("opaque", .string(let text)):
            return Data(base64Encoded: text) != nil && !text.isEmpty
                ? [] : ["\(path): \"\(text)\" is not base64, as Apple's opaque strings are"]
        case ("fields", .object(let fields)):
            return fields.sorted { $0.key < $1.key }.flatMap {
                problems($0.value, dictionary: "RecordField", at: "\(path).\($0.key)")
            }
        default:
            return ["\(path): not \(type) (\(Self.kind(value)))"]
        }
    }

    private func problems(_ value: JSONValue, dictionary name: String, at path: String) -> [String] {
        guard case .object(let members) = value else { return ["\(path): not a dictionary (\(Self.kind(value)))"] }
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

    /// A value's type as a problem names it: an integer apart from other numbers, as a strict client reads them.
    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .int: "an integer"
        case .double: "a number"
        case .array: "an array"
        case .object: "a dictionary"
        default: value.typeName
        }
    }

    // MARK: - The rendered table

    /// Docs/Reference/Dictionaries.md, written from the table.
    public func markdown() -> String {
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
                let notes = [
                    key.note, key.source.map { "from \($0)" }, key.capture.map { "live: \($0)" },
                    key.serve.map { "**\($0)**" },
                ]
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
    public static func anchor(_ path: String) -> String { "endpoint-" + path.replacingOccurrences(of: "/", with: "-") }

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
