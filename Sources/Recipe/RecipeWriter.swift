import Foundation
import ShareKit

/// Writes a recipe's declared state as YAML that `RecipeLoader` reads back to the same state: its users,
/// owner, zones with their shares and records (children nested under their parents), and public records.
/// Lanes and variables are not written: the writer serves `sharelane export`, which declares what a store holds.
///
/// The YAML is written by hand, because Yams' emitter drops the local tags (`!ref`, `!bytes`, `!share-url`)
/// that recipes use. Strings are written plain where the reader's scalar rules (`ScalarResolver`) read them
/// back as the same string, and double-quoted (JSON escapes) otherwise.
public struct RecipeWriter: Sendable {
    /// Comment lines written first (`# …`).
    public var header: [String]
    /// Whether `container:` and `environment:` are written (a recipe for a store that addresses one).
    public var writesContainer: Bool
    /// Asset values written as `!asset PATH`, by where they are (`assetKey`): files an export downloaded
    /// beside the recipe. Any other asset is written as its stored text (`{type: ASSETID, value: …}`).
    public var assetFiles: [String: String]

    /// The key of `assetFiles` for the asset in field `field` of record `record` in zone `zone`
    /// (`_defaultZone` for public records), or for element `element` (from 0) of an `ASSETID_LIST` there.
    public static func assetKey(zone: String, record: String, field: String, element: Int? = nil) -> String {
        [zone, record, field, element.map(String.init) ?? ""].joined(separator: "\u{0}")
    }

    public init(header: [String] = [], writesContainer: Bool = true, assetFiles: [String: String] = [:]) {
        self.header = header
        self.writesContainer = writesContainer
        self.assetFiles = assetFiles
    }

    /// The recipe as YAML.
    public func yaml(_ recipe: Recipe) -> String {
        var out = Lines()
        for line in header { out.line(0, "# \(line)") }
        out.line(0, "sharelane: \(recipe.formatVersion)")
        out.line(0, "name: \(Self.string(recipe.name))")
        if let description = recipe.description { out.line(0, "description: \(Self.string(description))") }
        if writesContainer {
            out.line(0, "container: \(Self.string(recipe.container))")
            out.line(0, "environment: \(recipe.environment.rawValue)")
        }
        out.blank()
        out.line(0, "users:")
        for user in recipe.users {
            var parts = ["email: \(Self.string(user.email))"]
            if let name = user.name { parts.append("name: \(Self.string(name))") }
            if let phone = user.phone { parts.append("phone: \(Self.string(phone))") }
            if let discoverable = user.discoverable { parts.append("discoverable: \(discoverable)") }
            out.line(1, "\(Self.string(user.handle)): {\(parts.joined(separator: ", "))}")
        }
        out.line(0, "owner: \(Self.string(recipe.owner))")
        if recipe.schema.isDeclared, !recipe.schema.schema.isEmpty {
            out.blank()
            out.line(0, "schema:")
            for type in recipe.schema.schema.orderedTypes {
                out.line(1, "\(Self.string(type.name)):" + (type.fields.isEmpty ? " {}" : ""))
                for field in type.orderedFields {
                    out.line(
                        2,
                        "\(Self.string(field.name)): \(([field.typeName] + field.indexes.words).joined(separator: " "))"
                    )
                }
            }
        }
        if !recipe.zones.isEmpty {
            out.blank()
            out.line(0, "zones:")
            for zone in recipe.zones {
                out.line(1, "\(Self.string(zone.name)):")
                if let owner = zone.owner { out.line(2, "owner: \(Self.string(owner))") }
                if zone.absent { out.line(2, "absent: true") }
                if zone.prune { out.line(2, "prune: true") }
                if let share = zone.share { Self.write(share, indent: 2, to: &out) }
                Self.write(zone.records, zone: zone.name, indent: 2, assetFiles: assetFiles, to: &out)
            }
        }
        if !recipe.publicRecords.isEmpty {
            out.blank()
            out.line(0, "public:")
            Self.write(recipe.publicRecords, zone: defaultZoneName, indent: 1, assetFiles: assetFiles, to: &out)
        }
        if !recipe.subscriptions.isEmpty {
            out.blank()
            out.line(0, "subscriptions:")
            for subscription in recipe.subscriptions { out.line(1, "- " + Self.flow(subscription)) }
        }
        return out.text
    }

    // MARK: - Parts

    /// An entry of `subscriptions:` as one flow mapping: `{as: alice, id: x, database: private, type: database}`.
    static func flow(_ declared: DeclaredSubscription) -> String {
        let step = declared.subscribe
        var parts = [
            "as: \(string(declared.handle))", "id: \(string(step.subscriptionID))",
            "database: \(step.database.rawValue)", "type: \(step.kind.rawValue)",
        ]
        if let zone = step.zone { parts.append("zone: \(string(zone))") }
        if step.kind == .query {
            if let recordType = step.recordType { parts.append("record_type: \(string(recordType))") }
            parts.append("fires_on: [" + step.firesOn.map(\.rawValue).joined(separator: ", ") + "]")
        }
        if step.firesOnce { parts.append("fires_once: true") }
        if let alert = step.alertBody { parts.append("alert: \(string(alert))") }
        return "{" + parts.joined(separator: ", ") + "}"
    }

    private struct Lines {
        var lines: [String] = []
        var text: String { lines.joined(separator: "\n") + "\n" }
        mutating func line(_ indent: Int, _ text: String) {
            lines.append(String(repeating: "  ", count: indent) + text)
        }
        mutating func blank() { lines.append("") }
    }

    private static func write(_ declaration: ShareDeclaration, indent: Int, to out: inout Lines) {
        guard case .share(let share) = declaration else {
            out.line(indent, "share: none")
            return
        }
        out.line(indent, "share:")
        if let title = share.title { out.line(indent + 1, "title: \(string(title))") }
        out.line(indent + 1, "public_permission: \(share.publicPermission.recipeName)")
        if share.stableURL { out.line(indent + 1, "stable_url: true") }
        guard !share.participants.isEmpty else { return }
        out.line(indent + 1, "participants:")
        for participant in share.participants {
            var parts = ["permission: \(participant.permission.recipeName)"]
            if participant.role != .privateUser { parts.append("role: \(participant.role.recipeName)") }
            parts.append("accepted: \(participant.accepted)")
            out.line(indent + 2, "\(string(participant.handle)): {\(parts.joined(separator: ", "))}")
        }
    }

    /// Records in their order, each child nested under its parent when the parent is declared present;
    /// a record whose parent is absent or not declared names it with `parent:`.
    private static func write(
        _ records: [DeclaredRecord], zone: String, indent: Int, assetFiles: [String: String], to out: inout Lines
    ) {
        guard !records.isEmpty else { return }
        let present = Set(records.filter { !$0.absent }.map(\.name))
        func nests(_ record: DeclaredRecord) -> Bool {
            guard let parent = record.parent else { return false }
            return parent != record.name && present.contains(parent)
        }
        var children: [String: [DeclaredRecord]] = [:]
        for record in records where nests(record) { children[record.parent ?? "", default: []].append(record) }
        out.line(indent, "records:")
        var written = Set<String>()
        func write(_ record: DeclaredRecord, _ indent: Int, nested: Bool) {
            guard written.insert(record.name).inserted else { return }
            let key = string(record.name)
            if record.absent && record.fields.isEmpty && record.share == nil && children[record.name] == nil {
                var parts = ["type: \(string(record.type))", "absent: true"]
                if let parent = record.parent, !nested { parts.append("parent: \(string(parent))") }
                out.line(indent, "\(key): {\(parts.joined(separator: ", "))}")
                return
            }
            out.line(indent, "\(key):")
            out.line(indent + 1, "type: \(string(record.type))")
            if let parent = record.parent, !nested, parent != record.name {
                out.line(indent + 1, "parent: \(string(parent))")
            }
            if record.absent { out.line(indent + 1, "absent: true") }
            if !record.fields.isEmpty {
                out.line(indent + 1, "fields:")
                for field in record.fields.keys.sorted() {
                    guard let value = record.fields[field] else { continue }
                    let key = { (element: Int?) in
                        assetFiles[Self.assetKey(zone: zone, record: record.name, field: field, element: element)]
                    }
                    if case .value(.assetID) = value, let path = key(nil) {
                        out.line(indent + 2, "\(string(field)): !asset \(string(path))")
                    } else if case .value(.list(.assetID, let elements)) = value, !elements.isEmpty,
                        case let paths = elements.indices.compactMap(key), paths.count == elements.count
                    {
                        // A list of downloaded assets, each element `!asset PATH`.
                        let list = paths.map { "!asset \(string($0))" }.joined(separator: ", ")
                        out.line(indent + 2, "\(string(field)): [\(list)]")
                    } else {
                        out.line(indent + 2, "\(string(field)): \(Self.value(value))")
                    }
                }
            }
            if let share = record.share { Self.write(share, indent: indent + 1, to: &out) }
            if let kids = children[record.name], !kids.isEmpty {
                out.line(indent + 1, "children:")
                for kid in kids { write(kid, indent + 2, nested: true) }
            }
        }
        for record in records where !nests(record) { write(record, indent + 1, nested: false) }
        // A parent cycle has no top: what is left is written at the top, naming its parent.
        for record in records where !written.contains(record.name) { write(record, indent + 1, nested: false) }
    }

    // MARK: - Scalars

    /// A scalar that reads back as the string `s`, variables and templates included: `${` is written `$${`
    /// and `{{` as `{{"{{"}}`, so that the loader gives back the text, not an expansion.
    public static func string(_ s: String) -> String {
        var s = s
        if s.contains("${") { s = s.replacingOccurrences(of: "${", with: "$${") }
        if s.contains("{{") { s = s.replacingOccurrences(of: "{{", with: "{{\"{{\"}}") }
        let safe =
            s.range(of: #"^[A-Za-z0-9_][A-Za-z0-9_ .@/+-]*$"#, options: .regularExpression) != nil
            && !s.hasSuffix(" ")
            && { if case .string = ScalarResolver.resolve(s) { return true } else { return false } }()
        if safe { return s }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        if let data = try? encoder.encode(s), let quoted = String(data: data, encoding: .utf8) { return quoted }
        return "\"\(s)\""
    }

    /// The YAML of a field value, as a recipe declares it.
    public static func value(_ value: DeclaredValue) -> String {
        switch value {
        case .shareURL(let zone, let record):
            return "!share-url \(string(record.map { "\(zone)/\($0)" } ?? zone))"
        case .value(let value):
            return Self.value(value)
        }
    }

    /// The YAML of a field value.
    public static func value(_ value: FieldValue) -> String {
        switch value {
        case .string(let s):
            return string(s)
        case .int64(let i):
            return String(i)
        case .double(let d):
            if d.isNaN { return ".nan" }
            if d.isInfinite { return d < 0 ? "-.inf" : ".inf" }
            let text = String(d)
            if case .double = ScalarResolver.resolve(text) { return text }
            return "{type: DOUBLE, value: \(string(text))}"
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
            return "[" + values.map { Self.value($0) }.joined(separator: ", ") + "]"
        }
    }

    /// `2024-05-01T09:00:00Z`, with milliseconds when there are any.
    public static func timestamp(_ ms: Int64) -> String {
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = ms - seconds * 1000
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        let base = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
        guard millis != 0 else { return base }
        return String(base.dropLast()) + String(format: ".%03dZ", millis)
    }
}
