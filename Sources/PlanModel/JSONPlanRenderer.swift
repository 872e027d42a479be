import Foundation
import JSONText
import ShareKit
import SharingReport

/// Renders a plan as JSON for machines: `format_version`, `recipe`, `store`, `container`, `environment`, `summary` {add, change,
/// destroy}, `changes[]` (each with `action`, `kind`, `address`, `before`, `after`), `notes`, `waiting`,
/// `access_changes[]` (the access cells the plan changes; see `accessChanges`), for `plan --against`,
/// `against` (see `against(_:)`), and for a recipe with several owners `zone_owners` (each zone's owner by
/// zone name).
///
/// `before` and `after` are objects of the attributes that differ (null for a create's `before` and a
/// delete's `after`): properties by name (`type`, `parent`, `title`, `permission`, `accepted`), record fields
/// under `fields`. Strings, numbers and lists are JSON values; timestamps are ISO 8601 strings; other
/// CloudKit values are their text rendering; a share URL not yet known is `"(known after apply)"`.
public struct JSONPlanRenderer: Sendable {
    /// The version of this JSON layout.
    public static let formatVersion = 1

    public init() {}

    public func render(_ plan: Plan) -> String {
        var text = ""
        write(plan, to: &text)
        return text
    }

    /// Writes the JSON to `output` one change at a time, in exactly the layout of Foundation's `JSONEncoder`
    /// with `[.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]` but for doubles, which are written as
    /// `JSONNumber` says; the whole document is never built.
    public func write<Output: TextOutputStream>(_ plan: Plan, to output: inout Output) {
        let summary = plan.summary
        let changes = plan.changes
        let document: JSONValue = .object(
            [
                "format_version": .integer(Int64(Self.formatVersion)),
                "recipe": .string(plan.recipeName),
                "store": .string(plan.storeName),
                "container": plan.container.map(JSONValue.string) ?? .null,
                "environment": .string((plan.environment ?? .development).rawValue),
                "summary": .object([
                    "add": .integer(Int64(summary.add)), "change": .integer(Int64(summary.change)),
                    "destroy": .integer(Int64(summary.destroy)),
                ]),
                "changes": .lazyArray(count: changes.count) { Self.change(changes[$0]) },
                "notes": .array(plan.notes.map(JSONValue.string)),
                "waiting": .array(plan.waiting.map(JSONValue.string)),
            ].merging(plan.access.map { ["access_changes": Self.accessChanges($0)] } ?? [:]) { a, _ in a }
                .merging(plan.schema.map { ["schema_changes": Self.schemaChanges($0)] } ?? [:]) { a, _ in a }
                .merging(plan.against.map { ["against": Self.against($0)] } ?? [:]) { a, _ in a }
                .merging(plan.zoneOwners == nil ? [:] : ["zone_owners": Self.zoneOwners(plan)]) { a, _ in a })
        document.write(to: &output, indent: 0)
        output.write("\n")
    }

    /// A plan of several owners' zones: the owner's handle of every zone it reads or changes, by zone name.
    static func zoneOwners(_ plan: Plan) -> JSONValue {
        var owners: [String: JSONValue] = [:]
        for zone in plan.basis.zones {
            owners[zone.zoneName] = .string(plan.zoneOwners?[zone.zoneName] ?? plan.owner.handle)
        }
        for change in plan.changes where change.database == .private && change.kind != .subscription {
            owners[change.zoneName] = .string(plan.owner(of: change))
        }
        return .object(owners)
    }

    /// What a `plan --against` plan is against: `recipe`, `revision` (null for a file), and `problem` (null
    /// when the base recipe was applied; else why the plan is against nothing).
    static func against(_ base: AgainstRecipe) -> JSONValue {
        .object([
            "recipe": .string(base.recipe),
            "revision": base.revision.map(JSONValue.string) ?? .null,
            "problem": base.problem.map(JSONValue.string) ?? .null,
        ])
    }

    /// The schema changes: `environment` and `changes[]`, each with `action` (`add-type`, `add-field`,
    /// `change-indexes`), `record_type`, and for a field `field`, `type` and `indexes`.
    static func schemaChanges(_ schema: PlannedSchema) -> JSONValue {
        .object([
            "environment": .string(schema.environment.rawValue),
            "changes": .array(
                schema.changes.map { change in
                    var entry: [String: JSONValue] = [
                        "action": .string(change.kind.rawValue), "record_type": .string(change.recordType),
                    ]
                    if let field = change.after {
                        entry["field"] = .string(field.name)
                        entry["type"] = .string(field.typeName)
                        entry["indexes"] = .array(field.indexes.words.map { .string($0) })
                    }
                    return .object(entry)
                }),
        ])
    }

    static func change(_ change: PlannedChange) -> JSONValue {
        func side(_ pick: (AttributeChange) -> PlannedValue?) -> JSONValue {
            var properties: [String: JSONValue] = [:]
            var fields: [String: JSONValue] = [:]
            for attribute in change.attributes {
                guard let value = pick(attribute) else { continue }
                if attribute.isField {
                    fields[attribute.name] = json(value)
                } else {
                    properties[attribute.name] = json(value)
                }
            }
            if !fields.isEmpty { properties["fields"] = .object(fields) }
            return .object(properties)
        }
        return .object([
            "action": .string(change.action.rawValue),
            "kind": .string(change.kind.rawValue),
            "address": .string(change.address),
            "before": change.action == .create ? .null : side(\.before),
            "after": change.action == .delete ? .null : side(\.after),
        ])
    }

    /// The access cells the plan changes: `user` (handle), `email`, `share` (its label), `before` and `after`
    /// (the right in one word, null where the share does not exist on that side) and `before_status` /
    /// `after_status` (`pending`, `accepted`, `removed`, or null for the owner and non-participants).
    static func accessChanges(_ access: PlanAccess) -> JSONValue {
        .array(
            access.changes.map { change in
                .object([
                    "user": .string(change.user.label),
                    "email": change.user.email.map(JSONValue.string) ?? .null,
                    "share": .string(change.column),
                    "before": change.before.map { .string($0.word) } ?? .null,
                    "after": change.after.map { .string($0.word) } ?? .null,
                    "before_status": change.before?.status.map { .string($0.recipeName) } ?? .null,
                    "after_status": change.after?.status.map { .string($0.recipeName) } ?? .null,
                ])
            })
    }

    static func json(_ value: PlannedValue) -> JSONValue {
        switch value {
        case .text("true"): return .bool(true)
        case .text("false"): return .bool(false)
        case .text(let s): return Int64(s).map { .integer($0) } ?? .string(s)
        case .shareURL: return .string("(known after apply)")
        case .value(let v): return json(v)
        }
    }

    static func json(_ value: FieldValue) -> JSONValue {
        switch value {
        case .string(let s): return .string(s)
        case .int64(let i): return .integer(i)
        case .double(let d): return .number(d)
        case .list(_, let values): return .array(values.map(json))
        default: return .string(value.displayString)
        }
    }
}

/// A JSON value, written as Foundation's `JSONEncoder` writes it with `[.prettyPrinted, .sortedKeys,
/// .withoutEscapingSlashes]` (a test holds the two to the same bytes), but for a double, which is written as
/// every writer of sharelane's writes it (`JSONNumber`).
enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// An array whose elements are made one at a time as they are written.
    case lazyArray(count: Int, element: @Sendable (Int) -> JSONValue)
    case object([String: JSONValue])

    /// Writes the value; `indent` is the indentation of the line it starts on.
    func write<Output: TextOutputStream>(to output: inout Output, indent: Int) {
        switch self {
        case .null: output.write("null")
        case .bool(let b): output.write(b ? "true" : "false")
        case .integer(let i): output.write(String(i))
        case .number(let d): output.write(Self.numberText(d))
        case .string(let s): Self.writeString(s, to: &output)
        case .array(let items):
            Self.writeArray(count: items.count, indent: indent, to: &output) { items[$0] }
        case .lazyArray(let count, let element):
            Self.writeArray(count: count, indent: indent, to: &output, element: element)
        case .object(let members):
            let inner = String(repeating: " ", count: indent + 2)
            output.write("{\n")
            if members.isEmpty { output.write("\n") }
            var first = true
            // `.sortedKeys` orders keys as String's `<` does.
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                if !first { output.write(",\n") }
                first = false
                output.write(inner)
                Self.writeString(key, to: &output)
                output.write(" : ")
                member.write(to: &output, indent: indent + 2)
            }
            if !members.isEmpty { output.write("\n") }
            output.write(String(repeating: " ", count: indent))
            output.write("}")
        }
    }

    private static func writeArray<Output: TextOutputStream>(
        count: Int, indent: Int, to output: inout Output, element: (Int) -> JSONValue
    ) {
        let inner = String(repeating: " ", count: indent + 2)
        output.write("[\n")
        if count == 0 { output.write("\n") }
        for index in 0..<count {
            if index > 0 { output.write(",\n") }
            output.write(inner)
            element(index).write(to: &output, indent: indent + 2)
        }
        if count > 0 { output.write("\n") }
        output.write(String(repeating: " ", count: indent))
        output.write("]")
    }

    /// A double as `JSONNumber` writes it: `3.0` for a whole one, so that a reader tells it from the integer
    /// `3`, and NaN and the infinities as the strings that name them (JSON has no such numbers).
    static func numberText(_ d: Double) -> String { JSONNumber.json(d) }

    private static func writeString<Output: TextOutputStream>(_ s: String, to output: inout Output) {
        output.write("\"")
        output.write(JSONString.escaped(s))
        output.write("\"")
    }
}
