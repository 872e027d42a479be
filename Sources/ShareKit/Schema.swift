/// `development` or `production`: the two environments of a CloudKit container, each with its own schema.
public enum CloudKitEnvironment: String, Sendable, Hashable, Codable, CaseIterable {
    case development
    case production
}

/// The indexes of one field, as the CloudKit Schema Language names them.
public struct SchemaIndexes: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Equality lookups (`EQUALS`, `IN`, `LIST_CONTAINS`, `BEGINS_WITH` …).
    public static let queryable = SchemaIndexes(rawValue: 1)
    /// Range searches and sorting.
    public static let sortable = SchemaIndexes(rawValue: 2)
    /// Token search in text.
    public static let searchable = SchemaIndexes(rawValue: 4)

    /// The words, in the Schema Language's order: `QUERYABLE SORTABLE SEARCHABLE`.
    public var words: [String] {
        [(SchemaIndexes.queryable, "QUERYABLE"), (.sortable, "SORTABLE"), (.searchable, "SEARCHABLE")]
            .filter { contains($0.0) }.map(\.1)
    }

    /// The index a word names (`QUERYABLE`, any case), or nil.
    public init?(word: String) {
        switch word.uppercased() {
        case "QUERYABLE": self = .queryable
        case "SORTABLE": self = .sortable
        case "SEARCHABLE": self = .searchable
        default: return nil
        }
    }
}

/// One field of a record type: its type, fixed once written, and its indexes.
public struct SchemaField: Sendable, Hashable, Codable {
    public var name: String
    public var type: FieldType
    /// `ENCRYPTED STRING`: the value is encrypted with the user's keys; it cannot be queried or indexed.
    public var isEncrypted: Bool
    public var indexes: SchemaIndexes

    public init(_ name: String, _ type: FieldType, isEncrypted: Bool = false, indexes: SchemaIndexes = []) {
        self.name = name
        self.type = type
        self.isEncrypted = isEncrypted
        self.indexes = indexes
    }

    /// The type as the Schema Language writes it: `STRING`, `ENCRYPTED STRING`, `LIST<INT64>`, `ASSET`.
    public var typeName: String {
        func scalar(_ t: FieldType) -> String { t == .assetID ? "ASSET" : t.rawValue }
        let base = type.elementType.map { "LIST<\(scalar($0))>" } ?? scalar(type)
        return isEncrypted ? "ENCRYPTED \(base)" : base
    }

    /// The field as one line of a schema: `endDate TIMESTAMP QUERYABLE SORTABLE`.
    public var declaration: String {
        ([SchemaField.quotedIfNeeded(name), typeName] + indexes.words).joined(separator: " ")
    }

    /// `"___recordID"`, `"cloudkit.title"`, `grant` in double quotes; plain names as they are.
    public static func quotedIfNeeded(_ name: String) -> String {
        let reserved: Set<String> = ["grant", "preferred", "queryable", "sortable", "searchable"]
        let plain =
            name.first.map { $0.isLetter && $0.isASCII } ?? false
            && name.allSatisfy { ($0.isLetter || $0.isNumber || $0 == "_") && $0.isASCII }
            && !reserved.contains(name.lowercased())
        return plain ? name : "\"\(name)\""
    }
}

/// A record type and its fields.
public struct RecordTypeSchema: Sendable, Hashable, Codable {
    public var name: String
    /// Fields by name; system fields (`___recordID` …) appear only while they carry an index.
    public var fields: [String: SchemaField]

    public init(_ name: String, fields: [SchemaField] = []) {
        self.name = name
        self.fields = Dictionary(fields.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// The fields in name order, system fields first (as `cktool export-schema` writes them).
    public var orderedFields: [SchemaField] {
        fields.values.sorted { a, b in
            let (x, y) = (SchemaRules.isSystemField(a.name), SchemaRules.isSystemField(b.name))
            return x != y ? x : a.name < b.name
        }
    }
}

/// Record types with typed, indexed fields: the schema of one environment of a container.
public struct Schema: Sendable, Hashable {
    public var recordTypes: [String: RecordTypeSchema]

    public init(recordTypes: [RecordTypeSchema] = []) {
        self.recordTypes = Dictionary(recordTypes.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// The record types in name order.
    public var orderedTypes: [RecordTypeSchema] { recordTypes.values.sorted { $0.name < $1.name } }

    public var isEmpty: Bool { recordTypes.isEmpty }

    /// The field `name` of `recordType`, if the schema has it.
    public func field(_ name: String, of recordType: String) -> SchemaField? {
        recordTypes[recordType]?.fields[name]
    }
}

// MARK: - Codable

extension Schema: Codable {
    // Written as lists in name order, so the JSON form is stable and reads like the `.ckdb` one:
    // {"recordTypes": [{"name": "Todo", "fields": [{"name": "qty", "type": "INT64", "indexes": ["QUERYABLE"]}]}]}
    private struct FieldForm: Codable {
        var name: String
        var type: FieldType
        var encrypted: Bool?
        var indexes: [String]
    }

    private struct TypeForm: Codable {
        var name: String
        var fields: [FieldForm]
    }

    private enum CodingKeys: String, CodingKey { case recordTypes }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let types = try container.decode([TypeForm].self, forKey: .recordTypes)
        self.init(
            recordTypes: try types.map { type in
                RecordTypeSchema(
                    type.name,
                    fields: try type.fields.map { field in
                        let indexes = try field.indexes.map { word in
                            guard let index = SchemaIndexes(word: word) else {
                                throw DecodingError.dataCorruptedError(
                                    forKey: .recordTypes, in: container,
                                    debugDescription:
                                        "unknown index \(word); expected QUERYABLE, SORTABLE or SEARCHABLE")
                            }
                            return index
                        }
                        return SchemaField(
                            field.name, field.type, isEncrypted: field.encrypted ?? false,
                            indexes: SchemaIndexes(indexes))
                    })
            })
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(
            orderedTypes.map { type in
                TypeForm(
                    name: type.name,
                    fields: type.orderedFields.map {
                        FieldForm(
                            name: $0.name, type: $0.type, encrypted: $0.isEncrypted ? true : nil,
                            indexes: $0.indexes.words)
                    })
            }, forKey: .recordTypes)
    }
}
