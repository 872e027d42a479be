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
            if let problem = CloudKitLimits.recordTypeProblem(typeName) {
                error(problem, typePair.keyLocation)
                continue
            }
            var type = RecordTypeSchema(typeName)
            result.locations[typeName] = typePair.keyLocation
            for fieldPair in pairs(typePair.value, "record type `\(typeName)`") ?? [] {
                let name = fieldPair.key
                if let problem = CloudKitLimits.declaredFieldProblem(name, recordType: typeName) {
                    error(problem, fieldPair.keyLocation)
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
///
/// A value written plainly takes its field's type where the recipe gives the field one, as CloudKit settles
/// a value sent without a type (`SchemaRules.settled`): `amount: 30` is a DOUBLE where the schema declares
/// `amount` DOUBLE, or another record gives it `30.5`. Lane `save:` steps are read the same way, and checked
/// against the recipe's schema with the same messages, at the step.
struct SchemaInference {
    /// The fields written with an explicit type, by their record's or step's place
    /// (`RecipeDecoder.typedFields`): those keep the type they were given, and may contradict the schema.
    var typedFields: [SourceLocation: Set<String>] = [:]
    var errors: [RecipeError] = []
    var warnings: [RecipeError] = []

    mutating func infer(_ recipe: inout Recipe) {
        settleRecords(&recipe)
        let declared = recipe.schema.schema
        inferTypes(&recipe)
        settleLaneSteps(&recipe, declared: declared)
    }

    /// Whether a record's or step's field was written plainly and may be settled: a whole number, or a list
    /// of them, not given a type.
    private func mayBeSettled(_ value: DeclaredValue, field: String, at place: SourceLocation) -> Bool {
        guard case .value(let v) = value else { return false }
        switch v {
        case .int64, .list(.int64, _): return typedFields.isEmpty || typedFields[place]?.contains(field) != true
        default: return false
        }
    }

    /// Settles the records' plain whole numbers to the type their field has elsewhere in the recipe: the
    /// declared one, else the first type a value that could not be settled gives it.
    private mutating func settleRecords(_ recipe: inout Recipe) {
        var targets: [String: [String: FieldType]] = recipe.schema.schema.recordTypes.mapValues {
            $0.fields.mapValues(\.type)
        }
        func note(_ record: DeclaredRecord) {
            guard !record.absent, !record.type.isEmpty else { return }
            // Most records (100,000 generated ones) have fields whose types are all known by then.
            if let known = targets[record.type], record.fields.keys.allSatisfy({ known[$0] != nil }) { return }
            for (name, value) in record.fields where !mayBeSettled(value, field: name, at: record.location) {
                guard targets[record.type]?[name] == nil else { continue }
                switch value {
                case .value(let v): targets[record.type, default: [:]][name] = v.type
                case .shareURL: targets[record.type, default: [:]][name] = .string
                }
            }
        }
        for zone in recipe.zones { zone.records.forEach(note) }
        recipe.publicRecords.forEach(note)
        // Only types whose whole numbers mean something else need a second pass (most recipes have none).
        let settling = targets.filter {
            $0.value.values.contains { [.double, .timestamp, .doubleList, .timestampList].contains($0) }
        }
        guard !settling.isEmpty else { return }
        // The values that chose a field's type, and how many whole numbers took it, for the warning.
        var deciding = FieldTallies()
        var settled: [String: Int] = [:]
        func settle(_ record: inout DeclaredRecord) {
            guard let fieldTypes = settling[record.type] else { return }
            for (name, value) in record.fields {
                guard let type = fieldTypes[name], case .value(let v) = value else { continue }
                guard mayBeSettled(value, field: name, at: record.location) else {
                    if v.type == type { deciding.count("\(record.type).\(name)", type, record) }
                    continue
                }
                record.fields[name] = .value(SchemaRules.settled(v, as: type))
                settled["\(record.type).\(name)", default: 0] += 1
            }
        }
        defer { warnSettled(deciding, settled: settled, declared: recipe.schema.schema) }
        for zoneIndex in recipe.zones.indices {
            for recordIndex in recipe.zones[zoneIndex].records.indices {
                settle(&recipe.zones[zoneIndex].records[recordIndex])
            }
        }
        for recordIndex in recipe.publicRecords.indices { settle(&recipe.publicRecords[recordIndex]) }
    }

    /// Settles the plain whole numbers of lane `save:` steps to the recipe's schema, and reports a field whose
    /// value contradicts it, at the step.
    private mutating func settleLaneSteps(_ recipe: inout Recipe, declared: Schema) {
        let schema = recipe.schema
        func check(_ steps: inout [Step]) {
            for index in steps.indices {
                guard case .save(let zone, let record, let type, let parent, var fields) = steps[index].action else {
                    continue
                }
                let place = steps[index].location
                for name in fields.keys.sorted() {
                    guard let value = fields[name], let known = schema.schema.field(name, of: type) else { continue }
                    if mayBeSettled(value, field: name, at: place), case .value(let v) = value {
                        fields[name] = .value(SchemaRules.settled(v, as: known.type))
                    }
                    let given: FieldType
                    switch fields[name] {
                    case .value(let v)?: given = v.type
                    case .shareURL?: given = .string
                    case nil: continue
                    }
                    // A step that expects the store's refusal (`expect_error:`) may send what the schema refuses.
                    guard given != known.type, steps[index].expectedError == nil else { continue }
                    errors.append(
                        Self.contradiction(
                            field: name, record: record, given: given, known: known, recordType: type,
                            declared: declared.field(name, of: type) != nil, schema: schema, at: place))
                }
                steps[index].action = .save(zone: zone, record: record, type: type, parent: parent, fields: fields)
            }
        }
        for laneIndex in recipe.lanes.indices { check(&recipe.lanes[laneIndex].steps) }
        check(&recipe.beforeAll)
        check(&recipe.afterAll)
        check(&recipe.onError)
        check(&recipe.beforeEach)
        check(&recipe.afterEach)
    }

    /// A value of another type than its field's: what the record or step gave, and where the field got its
    /// type.
    private static func contradiction(
        field name: String, record: String, given: FieldType, known: SchemaField, recordType: String,
        declared: Bool, schema: RecipeSchema, at place: SourceLocation
    ) -> RecipeError {
        let key = "\(recordType).\(name)"
        let location = schema.locations[key].map { " (\($0))" } ?? ""
        let origin =
            declared
            ? "the schema declares \(key) \(known.typeName)\(location)"
            : "an earlier record made \(key) \(known.type.rawValue)\(location)"
        return RecipeError(
            "field `\(name)` of record `\(record)` is \(given.rawValue), but \(origin); a field keeps one type in "
                + "CloudKit: write the value as \(known.type.rawValue)" + typeHint(known.type), at: place)
    }

    private mutating func inferTypes(_ recipe: inout Recipe) {
        var result = recipe.schema
        let declared = recipe.schema.schema
        // The fields each record type was last seen with, as far as they agree with the schema: a record whose
        // fields all match them adds nothing and contradicts nothing, and is passed over without sorting its
        // field names (100,000 generated records have the same four fields).
        var agreed: [String: [String: FieldType]] = [:]
        var conflicted: Set<String> = []
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
                    // Said once per field, naming the fewer values, after every record is counted.
                    conflicted.insert(key)
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
        if !conflicted.isEmpty { reportConflicts(conflicted, in: recipe, schema: &result, declared: declared) }
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

    static func typeHint(_ type: FieldType) -> String {
        switch type {
        case .double: " (e.g. `500.0`, or `{type: DOUBLE, value: 500}`)"
        case .int64: " (a whole number, or `{type: INT64, value: …}`)"
        default: " (or `{type: \(type.rawValue), value: …}`)"
        }
    }
}
