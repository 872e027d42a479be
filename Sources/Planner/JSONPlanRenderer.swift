import Foundation
import ShareKit

/// Renders a plan as JSON for machines: `format_version`, `recipe`, `store`, `summary` {add, change,
/// destroy}, `changes[]` (each with `action`, `kind`, `address`, `before`, `after`), `notes`, `waiting`.
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
        let summary = plan.summary
        let document: JSONValue = .object([
            "format_version": .integer(Int64(Self.formatVersion)),
            "recipe": .string(plan.recipeName),
            "store": .string(plan.storeName),
            "summary": .object([
                "add": .integer(Int64(summary.add)), "change": .integer(Int64(summary.change)),
                "destroy": .integer(Int64(summary.destroy)),
            ]),
            "changes": .array(plan.changes.map(Self.change)),
            "notes": .array(plan.notes.map(JSONValue.string)),
            "waiting": .array(plan.waiting.map(JSONValue.string)),
        ])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(document), let text = String(data: data, encoding: .utf8) else {
            return "{}\n"
        }
        return text + "\n"
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

/// A JSON value, encoded with sorted keys.
enum JSONValue: Encodable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .integer(let i): try container.encode(i)
        case .number(let d): try container.encode(d)
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        }
    }
}
