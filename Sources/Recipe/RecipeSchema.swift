import ShareKit

/// The schema a recipe needs: the record types and fields its `schema:` declares, and those its records
/// imply (a field's type is its first value's, with the indexes development gives a new field), with the
/// place each was declared or first implied.
public struct RecipeSchema: Sendable, Hashable, Codable {
    public var schema: Schema
    /// Whether the recipe has a `schema:` key.
    public var isDeclared: Bool
    /// Where each type (`Cost`) and field (`Cost.amount`) was declared or first implied.
    public var locations: [String: SourceLocation]

    public init(schema: Schema = Schema(), isDeclared: Bool = false, locations: [String: SourceLocation] = [:]) {
        self.schema = schema
        self.isDeclared = isDeclared
        self.locations = locations
    }

    /// Where a type, or one of its fields, was declared or first implied.
    public func location(_ recordType: String, _ field: String? = nil) -> SourceLocation? {
        locations[field.map { "\(recordType).\($0)" } ?? recordType]
    }
}

// MARK: - Reading `schema:`

extension RecipeDecoder {
    /// `schema: { TYPE: { FIELD: "TYPE [QUERYABLE] [SORTABLE] [SEARCHABLE]" } }`: each field in the words of the
    /// CloudKit Schema Language.
    func decodeSchema(_ node: RecipeNode) -> RecipeSchema {
        var result = RecipeSchema(isDeclared: true)
        guard let typePairs = pairs(node, "`schema`") else { return result }
        for typePair in typePairs {
            let typeName = typePair.key
            guard Self.isIdentifier(typeName) || typeName == shareRecordType else {
                error(
                    "`\(typeName)` is not a record type; use letters, digits and `_`, starting with a letter",
                    typePair.keyLocation)
                continue
            }
            var type = RecordTypeSchema(typeName)
            result.locations[typeName] = typePair.keyLocation
            for fieldPair in pairs(typePair.value, "record type `\(typeName)`") ?? [] {
                let name = fieldPair.key
                guard Self.isIdentifier(name) || SchemaRules.isSystemField(name) || name.hasPrefix("cloudkit.") else {
                    error(
                        "`\(name)` is not a field name; use letters, digits and `_`, starting with a letter",
                        fieldPair.keyLocation)
                    continue
                }
                guard let text = string(fieldPair.value, "field `\(name)` of `\(typeName)`") else { continue }
                do {
                    let spec = try SchemaLanguage.fieldSpec(text.split(separator: " ").map(String.init))
                    try SchemaLanguage.checkSystemField(name, spec)
                    type.fields[name] = SchemaField(
                        name, spec.type, isEncrypted: spec.isEncrypted, indexes: spec.indexes)
                    result.locations["\(typeName).\(name)"] = fieldPair.value.location
                } catch let problem {
                    error(
                        "field `\(name)` of `\(typeName)`: \(problem.message)", fieldPair.value.location)
                }
            }
            result.schema.recordTypes[typeName] = type
        }
        return result
    }
}

// MARK: - Inference

/// Adds to a recipe's schema what its records imply, and reports each record whose field contradicts the
/// declared type or the type an earlier record gave the field.
struct SchemaInference {
    var errors: [RecipeError] = []

    mutating func infer(_ recipe: inout Recipe) {
        var result = recipe.schema
        let declared = recipe.schema.schema
        // The fields each record type was last seen with, as far as they agree with the schema: a record whose
        // fields all match them adds nothing and contradicts nothing, and is passed over without sorting its
        // field names (100,000 generated records have the same four fields).
        var agreed: [String: [String: FieldType]] = [:]
        func fieldType(_ value: DeclaredValue) -> FieldType {
            switch value {
            case .value(let v): v.type
            case .shareURL: .string
            }
        }
        func infer(_ record: DeclaredRecord) {
            guard !record.absent && !record.type.isEmpty else { return }
            if let known = agreed[record.type],
                record.fields.allSatisfy({ name, value in known[name] == fieldType(value) })
            {
                return
            }
            if result.schema.recordTypes[record.type] == nil {
                result.schema.recordTypes[record.type] = RecordTypeSchema(record.type)
                result.locations[record.type] = record.location
            }
            for name in record.fields.keys.sorted() {
                guard let value = record.fields[name] else { continue }
                let type = fieldType(value)
                let key = "\(record.type).\(name)"
                if let known = result.schema.field(name, of: record.type) {
                    guard known.type != type else {
                        agreed[record.type, default: [:]][name] = type
                        continue
                    }
                    let source = declared.field(name, of: record.type) != nil ? "the schema declares" : "record"
                    let place = result.locations[key].map { " (\($0))" } ?? ""
                    let origin =
                        source == "the schema declares"
                        ? "the schema declares \(key) \(known.typeName)\(place)"
                        : "an earlier record made \(key) \(known.type.rawValue)\(place)"
                    errors.append(
                        RecipeError(
                            "field `\(name)` of record `\(record.name)` is \(type.rawValue), but \(origin); a field "
                                + "keeps one type in CloudKit: write the value as \(known.type.rawValue)"
                                + Self.hint(known.type), at: record.location))
                    continue
                }
                result.schema.recordTypes[record.type]?.fields[name] = SchemaField(
                    name, type, indexes: SchemaRules.defaultIndexes(for: type))
                result.locations[key] = record.location
                agreed[record.type, default: [:]][name] = type
            }
        }
        for zone in recipe.zones {
            for record in zone.records { infer(record) }
        }
        for record in recipe.publicRecords { infer(record) }
        let shares = recipe.zones.contains { zone in
            if case .share = zone.share { return true }
            return zone.records.contains { if case .share = $0.share { return true } else { return false } }
        }
        if shares, result.schema.recordTypes[shareRecordType] == nil {
            result.schema.recordTypes[shareRecordType] = RecordTypeSchema(
                shareRecordType, fields: SchemaRules.shareTypeFields)
        }
        recipe.schema = result
    }

    private static func hint(_ type: FieldType) -> String {
        switch type {
        case .double: " (e.g. `500.0`, or `{type: DOUBLE, value: 500}`)"
        case .int64: " (a whole number, or `{type: INT64, value: …}`)"
        default: " (or `{type: \(type.rawValue), value: …}`)"
        }
    }
}
