/// One difference between two schemas: a record type or field added or removed, a field's type changed, or
/// its indexes changed. Plans, `schema diff` and `schema deploy` list these.
public struct SchemaChange: Sendable, Hashable, Codable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case addType = "add-type"
        case removeType = "remove-type"
        case addField = "add-field"
        case removeField = "remove-field"
        /// A field whose type differs: never allowed on a live schema.
        case changeType = "change-type"
        case changeIndexes = "change-indexes"
    }

    public var kind: Kind
    public var recordType: String
    /// The field, before and after; nil for a whole record type.
    public var before: SchemaField?
    public var after: SchemaField?

    public init(_ kind: Kind, recordType: String, before: SchemaField? = nil, after: SchemaField? = nil) {
        self.kind = kind
        self.recordType = recordType
        self.before = before
        self.after = after
    }

    /// Whether production accepts the change: it is additive-only (a type or field removed, or a type
    /// changed, could lose data).
    public var isAdditive: Bool { kind == .addType || kind == .addField || kind == .changeIndexes }

    /// The field's address, `Todo.qty`, or the record type's.
    public var address: String {
        let field = after?.name ?? before?.name
        return field.map { "\(recordType).\($0)" } ?? recordType
    }

    /// `+` added, `-` removed, `~` changed.
    public var symbol: String {
        switch kind {
        case .addType, .addField: "+"
        case .removeType, .removeField: "-"
        case .changeType, .changeIndexes: "~"
        }
    }

    /// One line: `+ type Todo`, `+ field Todo.qty INT64 QUERYABLE`, `~ field Cost.amount DOUBLE → INT64`.
    public var description: String {
        func words(_ f: SchemaField?) -> String {
            guard let f else { return "" }
            return ([f.typeName] + f.indexes.words).joined(separator: " ")
        }
        switch kind {
        case .addType: return "+ type \(recordType)"
        case .removeType: return "- type \(recordType)"
        case .addField: return "+ field \(address) \(words(after))"
        case .removeField: return "- field \(address) \(words(before))"
        case .changeType:
            return "~ field \(address) \(before?.typeName ?? "") → \(after?.typeName ?? "")"
        case .changeIndexes:
            let from = before?.indexes.words.joined(separator: " ") ?? ""
            let to = after?.indexes.words.joined(separator: " ") ?? ""
            return "~ field \(address) indexes \(from.isEmpty ? "none" : from) → \(to.isEmpty ? "none" : to)"
        }
    }
}
