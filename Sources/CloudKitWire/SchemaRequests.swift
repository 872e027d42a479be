import ShareKit

/// The body of `schema/lookup`'s answer and of `schema/extend`'s request: `{schema: {recordTypes: […]}}`.
///
/// Written here rather than by `Schema`'s own `Codable`, which is the SQLite store's column: the field types
/// go out as `WireSpelling` spells them.
package struct SchemaResponse: Codable, Sendable, Hashable {
    package var schema: Schema

    package init(schema: Schema) { self.schema = schema }

    // {"recordTypes": [{"name": "Todo", "fields": [{"name": "qty", "type": "INT64", "indexes": ["QUERYABLE"]}]}]}
    private struct FieldForm: Codable {
        var name: String
        var type: String
        var encrypted: Bool?
        var indexes: [String]
    }

    private struct TypeForm: Codable {
        var name: String
        var fields: [FieldForm]
    }

    private struct SchemaForm: Codable {
        var recordTypes: [TypeForm]
    }

    private enum CodingKeys: String, CodingKey { case schema }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let form = try container.decode(SchemaForm.self, forKey: .schema)
        schema = Schema(
            recordTypes: try form.recordTypes.map { type in
                RecordTypeSchema(
                    type.name,
                    fields: try type.fields.map { field in
                        SchemaField(
                            field.name, try Self.fieldType(field.type, in: container),
                            isEncrypted: field.encrypted ?? false,
                            indexes: SchemaIndexes(try field.indexes.map { try Self.index($0, in: container) }))
                    })
            })
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let form = SchemaForm(
            recordTypes: schema.orderedTypes.map { type in
                TypeForm(
                    name: type.name,
                    fields: type.orderedFields.map {
                        FieldForm(
                            name: $0.name, type: WireSpelling.fieldType($0.type),
                            encrypted: $0.isEncrypted ? true : nil,
                            indexes: $0.indexes.words)
                    })
            })
        try container.encode(form, forKey: .schema)
    }

    private static func fieldType(_ word: String, in container: KeyedDecodingContainer<CodingKeys>) throws -> FieldType
    {
        guard let type = WireSpelling.fieldType(word) else {
            throw DecodingError.dataCorruptedError(
                forKey: .schema, in: container,
                debugDescription: "unknown field type \(word); expected one of "
                    + WireSpelling.fieldTypeWords.joined(separator: ", "))
        }
        return type
    }

    private static func index(_ word: String, in container: KeyedDecodingContainer<CodingKeys>) throws -> SchemaIndexes
    {
        guard let index = SchemaIndexes(word: word) else {
            throw DecodingError.dataCorruptedError(
                forKey: .schema, in: container,
                debugDescription: "unknown index \(word); expected QUERYABLE, SORTABLE or SEARCHABLE")
        }
        return index
    }
}

/// The answer of `schema/extend` and `schema/deploy`: what changed,
/// `{changes: [{kind, recordType, before?, after?}]}`, each field `{name, type, isEncrypted, indexes}`.
package struct SchemaChangesResponse: Codable, Sendable, Hashable {
    package var changes: [SchemaChange]

    package init(changes: [SchemaChange]) { self.changes = changes }

    private struct FieldForm: Codable {
        var name: String
        var type: String
        var isEncrypted: Bool
        /// The indexes as a bit set: 1 queryable, 2 sortable, 4 searchable.
        var indexes: Int
    }

    private struct ChangeForm: Codable {
        var kind: String
        var recordType: String
        var before: FieldForm?
        var after: FieldForm?
    }

    private enum CodingKeys: String, CodingKey { case changes }

    /// The `kind` of a change.
    static func kindWord(_ kind: SchemaChange.Kind) -> String {
        switch kind {
        case .addType: "add-type"
        case .removeType: "remove-type"
        case .addField: "add-field"
        case .removeField: "remove-field"
        case .changeType: "change-type"
        case .changeIndexes: "change-indexes"
        }
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func field(_ form: FieldForm?) throws -> SchemaField? {
            guard let form else { return nil }
            guard let type = WireSpelling.fieldType(form.type) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .changes, in: container, debugDescription: "unknown field type \(form.type)")
            }
            return SchemaField(
                form.name, type, isEncrypted: form.isEncrypted, indexes: SchemaIndexes(rawValue: form.indexes))
        }
        changes = try container.decode([ChangeForm].self, forKey: .changes).map { form in
            guard let kind = SchemaChange.Kind.allCases.first(where: { Self.kindWord($0) == form.kind }) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .changes, in: container, debugDescription: "unknown schema change \(form.kind)")
            }
            return SchemaChange(
                kind, recordType: form.recordType, before: try field(form.before), after: try field(form.after))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        func field(_ field: SchemaField?) -> FieldForm? {
            field.map {
                FieldForm(
                    name: $0.name, type: WireSpelling.fieldType($0.type), isEncrypted: $0.isEncrypted,
                    indexes: $0.indexes.rawValue)
            }
        }
        try container.encode(
            changes.map {
                ChangeForm(
                    kind: Self.kindWord($0.kind), recordType: $0.recordType, before: field($0.before),
                    after: field($0.after))
            }, forKey: .changes)
    }
}
