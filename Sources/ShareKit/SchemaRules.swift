import Foundation
/// CloudKit's schema rules as pure functions: what a save does to a schema, what a query needs, what a
/// deploy may change. Every store asks these (the SQLite store for each write and query, and through it
/// `sharelane serve`); the planner and `schema diff` compare schemas with `changes(from:to:)`.
///
/// The rules, as CloudKit applies them:
/// - A field's type is set by the first save that gives it a value; a save of another type fails
///   (`BAD_REQUEST`, "invalid attempt to set value type … defined to be: …"), in either environment.
/// - In development a save of a new record type or field creates it, with `defaultIndexes(for:)`.
///   In production the schema holds only what was deployed: a new type or field fails, the share type
///   `cloudkit.share` included.
/// - A query filters on `QUERYABLE` fields (`SORTABLE` for ranges) and sorts on `SORTABLE` ones; by record
///   name it needs `___recordID QUERYABLE`; an encrypted field cannot be queried.
/// - Deploying copies development's schema to production, and is refused when that would remove a type or a
///   field or change a type: production is additive-only.
///
/// Apple documents no Web Services code for the production and index refusals; sharelane answers them with
/// `BAD_REQUEST` and Apple's wording (Docs/Schema.md).
public enum SchemaRules {
    /// The system fields every record type has, with their fixed types; only their indexes can be set.
    public static let systemFields: [String: FieldType] = [
        "___recordID": .reference, "___createTime": .timestamp, "___modTime": .timestamp,
        "___createdBy": .reference, "___modifiedBy": .reference, "___etag": .string,
    ]

    public static func isSystemField(_ name: String) -> Bool { name.hasPrefix("___") }

    /// The fields of the share record type, as Apple's exported schemas list them.
    public static let shareTypeFields: [SchemaField] = [
        SchemaField("cloudkit.thumbnailImageData", .bytes), SchemaField(shareTitleField, .string),
        SchemaField("cloudkit.type", .string),
    ]

    /// The indexes development gives a field that a save creates, so that queries work before anyone writes
    /// a schema: strings are queryable, sortable and searchable; numbers, dates and locations queryable and
    /// sortable (a location's `NEAR` filter and its sort by distance); references and lists queryable; bytes
    /// and assets none.
    public static func defaultIndexes(for type: FieldType) -> SchemaIndexes {
        switch type {
        case .string: [.queryable, .sortable, .searchable]
        case .int64, .double, .timestamp, .location: [.queryable, .sortable]
        case .reference: .queryable
        case .bytes, .assetID, .assetIDList, .bytesList, .locationList: []
        case .stringList, .int64List, .doubleList, .timestampList, .referenceList: .queryable
        }
    }

    // MARK: - Saves

    /// Admits a save of a record of `recordType` with these fields into `schema`: in development, the type
    /// and new fields are added; in production they must exist. A value whose type differs from the field's
    /// is refused in both. Nothing is added when the save is refused.
    /// - Throws: `BAD_REQUEST` with Apple's message, naming `subject`.
    /// - Returns: whether the schema grew.
    @discardableResult
    public static func admit(
        recordType: String, fields: [String: FieldValue], into schema: inout Schema,
        environment: CloudKitEnvironment, subject: String? = nil
    ) throws(ShareError) -> Bool {
        let known = schema.recordTypes[recordType]
        // The common case, a type that has every field already with the value's type, without sorting the
        // names (they are sorted below only so that a refusal names the first one).
        if let known, fields.allSatisfy({ known.fields[$0.key]?.type == $0.value.type }) { return false }
        if known == nil, let problem = CloudKitLimits.recordTypeProblem(recordType) {
            throw ShareError(.badRequest, problem, subject: subject)
        }
        if known == nil, environment == .production {
            throw ShareError(
                .badRequest,
                "Cannot create new type \(recordType) in production schema; deploy the development schema first "
                    + "(sharelane schema deploy)", subject: subject)
        }
        var added: [SchemaField] = []
        for name in fields.keys.sorted() {
            guard let value = fields[name] else { continue }
            if let field = known?.fields[name] {
                if field.type != value.type {
                    throw mismatch(value.type, field: field, recordType: recordType, subject: subject)
                }
                continue
            }
            if let system = systemFields[name] {
                throw ShareError(
                    .badRequest,
                    "\(name) is a system field (\(system.rawValue)) and cannot be set; rename the field",
                    subject: subject)
            }
            if let problem = CloudKitLimits.fieldNameProblem(name) {
                throw ShareError(.badRequest, problem, subject: subject)
            }
            if environment == .production {
                throw ShareError(
                    .badRequest,
                    "Cannot create or modify field '\(name)' in record '\(recordType)' in production schema; "
                        + "save it in development and deploy the schema (sharelane schema deploy)", subject: subject)
            }
            added.append(SchemaField(name, value.type, indexes: defaultIndexes(for: value.type)))
        }
        guard known == nil || !added.isEmpty else { return false }
        var type = known ?? RecordTypeSchema(recordType)
        for field in added { type.fields[field.name] = field }
        schema.recordTypes[recordType] = type
        return true
    }

    /// Admits a save of a share: development creates the `cloudkit.share` type; production must hold it.
    /// - Throws: `BAD_REQUEST` ("Cannot create new type cloudkit.share in production schema").
    public static func admitShare(
        into schema: inout Schema, environment: CloudKitEnvironment, subject: String? = nil
    ) throws(ShareError) {
        guard schema.recordTypes[shareRecordType] == nil else { return }
        guard environment == .development else {
            throw ShareError(
                .badRequest,
                "Cannot create new type \(shareRecordType) in production schema; share a record in development "
                    + "and deploy the schema (sharelane schema deploy) before sharing in production",
                subject: subject)
        }
        schema.recordTypes[shareRecordType] = RecordTypeSchema(shareRecordType, fields: shareTypeFields)
    }

    /// A value written without its type (a plain YAML scalar in a recipe; a JSON value with no `type` on the
    /// wire, as CloudKit JS sends every value an app gives none) takes the type of its field where the field
    /// has one that holds it. JavaScript and YAML cannot tell `2` from `2.0`, so a whole number is a DOUBLE
    /// field's number or a TIMESTAMP field's milliseconds, and a base64 string is a BYTES field's bytes; lists
    /// alike. Anything else is kept as read, for `admit` to judge: a fraction for an INT64 field is still
    /// refused, and so is a value whose type was given and differs from the field's.
    public static func settled(_ value: FieldValue, as type: FieldType?) -> FieldValue {
        guard let type, value.type != type else { return value }
        switch (value, type) {
        case (.int64(let number), .double): return .double(Double(number))
        case (.int64(let number), .timestamp): return .timestamp(number)
        case (.string(let text), .bytes): return Data(base64Encoded: text).map(FieldValue.bytes) ?? value
        case (.list(_, let values), _):
            guard let elementType = type.elementType else { return value }
            let elements = values.map { settled($0, as: elementType) }
            guard elements.allSatisfy({ $0.type == elementType }) else { return value }
            return .list(elementType: elementType, elements)
        default: return value
        }
    }

    /// A record's fields with those written without a type (`untyped`) settled to the types `schema` gives
    /// them (`settled(_:as:)`).
    public static func settling(
        _ fields: [String: FieldValue], untyped: Set<String>, recordType: String, in schema: Schema
    ) -> [String: FieldValue] {
        guard !untyped.isEmpty, let known = schema.recordTypes[recordType] else { return fields }
        var result = fields
        for name in untyped {
            guard let value = fields[name], let type = known.fields[name]?.type else { continue }
            result[name] = settled(value, as: type)
        }
        return result
    }

    /// Apple's refusal of a value of another type than the field's.
    public static func mismatch(_ given: FieldType, field: SchemaField, recordType: String, subject: String?)
        -> ShareError
    {
        ShareError(
            .badRequest,
            "invalid attempt to set value type \(given.rawValue) for field '\(field.name)' for type "
                + "'\(recordType)', defined to be: \(field.type.rawValue)", subject: subject)
    }

    // MARK: - Queries

    /// Whether a query may run on `schema`: nil when it may, else Apple's refusal.
    public static func checkQuery(_ query: RecordQuery, schema: Schema) -> ShareError? {
        // The whole request is refused: the answer names no record (over HTTP a request error has no subject).
        let subject: String? = nil
        guard let type = schema.recordTypes[query.recordType] else {
            return ShareError(.badRequest, "Did not find record type: \(query.recordType)", subject: subject)
        }
        func field(_ name: String) -> SchemaField? {
            type.fields[name == "recordName" ? "___recordID" : name]
        }
        for filter in query.filters {
            if let problem = filter.problem {
                return ShareError(.badRequest, problem, subject: subject)
            }
            let needed = filter.comparator.neededIndex
            if let found = field(filter.fieldName), found.isEncrypted {
                return ShareError(
                    .badRequest,
                    "Field '\(filter.fieldName)' has a value type of ENCRYPTED_\(found.type.rawValue) and cannot be "
                        + "queried using filter type \(filter.comparator.rawValue)", subject: subject)
            }
            guard field(filter.fieldName)?.indexes.contains(needed) ?? false else {
                return notMarked(filter.fieldName, needed, subject: subject)
            }
        }
        for sort in query.sort where !(field(sort.fieldName)?.indexes.contains(.sortable) ?? false) {
            return notMarked(sort.fieldName, .sortable, subject: subject)
        }
        return nil
    }

    private static func notMarked(_ name: String, _ index: SchemaIndexes, subject: String?) -> ShareError {
        let word = index.words.first?.lowercased() ?? "queryable"
        let system = name == "recordName" ? "___recordID" : name
        return ShareError(
            .badRequest,
            "Field '\(name)' is not marked \(word); add the index (\(system) … \(word.uppercased())) to the schema "
                + "in development and deploy it", subject: subject)
    }

    // MARK: - Comparing and deploying

    /// What turns schema `a` into schema `b`, record type by record type, fields in name order.
    /// The `Users` record type as CloudKit makes it in every container: its system fields and `roles`.
    static func isSystemUsersType(_ type: RecordTypeSchema) -> Bool {
        type.name == "Users" && type.fields.keys.allSatisfy { isSystemField($0) || $0 == "roles" }
    }

    public static func changes(from a: Schema, to b: Schema) -> [SchemaChange] {
        var changes: [SchemaChange] = []
        for name in Set(a.recordTypes.keys).union(b.recordTypes.keys).sorted() {
            switch (a.recordTypes[name], b.recordTypes[name]) {
            case (nil, let only?) where isSystemUsersType(only), (let only?, nil) where isSystemUsersType(only):
                // `cktool export-schema` writes the container's `Users` type; a schema that does not name it
                // means the same.
                continue
            case (nil, let added?):
                changes.append(SchemaChange(.addType, recordType: name))
                changes += added.orderedFields.map { SchemaChange(.addField, recordType: name, after: $0) }
            case (let removed?, nil):
                changes.append(SchemaChange(.removeType, recordType: name))
                changes += removed.orderedFields.map { SchemaChange(.removeField, recordType: name, before: $0) }
            case (let x?, let y?):
                changes += fieldChanges(from: x, to: y)
            case (nil, nil):
                break
            }
        }
        return changes
    }

    private static func fieldChanges(from x: RecordTypeSchema, to y: RecordTypeSchema) -> [SchemaChange] {
        var changes: [SchemaChange] = []
        let names = Set(x.fields.keys).union(y.fields.keys)
        let order = RecordTypeSchema(x.name, fields: names.map { SchemaField($0, .string) }).orderedFields.map(\.name)
        for name in order {
            switch (x.fields[name], y.fields[name]) {
            case (nil, let added?) where isSystemField(name) && added.indexes == SchemaField(name, added.type).indexes,
                (let added?, nil) where isSystemField(name) && added.indexes == SchemaField(name, added.type).indexes:
                // A system field is always there: naming it without an index (as `cktool` lists every one) is
                // no difference.
                continue
            case (nil, let added?):
                // A system field is always there: naming it only adds its indexes.
                changes.append(
                    isSystemField(name)
                        ? SchemaChange(
                            .changeIndexes, recordType: x.name, before: SchemaField(name, added.type), after: added)
                        : SchemaChange(.addField, recordType: x.name, after: added))
            case (let removed?, nil):
                changes.append(
                    isSystemField(name)
                        ? SchemaChange(
                            .changeIndexes, recordType: x.name, before: removed,
                            after: SchemaField(name, removed.type))
                        : SchemaChange(.removeField, recordType: x.name, before: removed))
            case (let before?, let after?):
                if before.type != after.type || before.isEncrypted != after.isEncrypted {
                    changes.append(SchemaChange(.changeType, recordType: x.name, before: before, after: after))
                } else if before.indexes != after.indexes {
                    changes.append(SchemaChange(.changeIndexes, recordType: x.name, before: before, after: after))
                }
            case (nil, nil):
                break
            }
        }
        return changes
    }

    /// What `declared` adds to `live`: new types and fields, and indexes `live` lacks. A declared field
    /// whose type differs from the live one is a `.changeType` change, which no store accepts. What `live`
    /// has beyond `declared` is left alone (a schema only grows).
    public static func additions(declared: Schema, live: Schema) -> [SchemaChange] {
        changes(from: live, to: declared).compactMap { change in
            switch change.kind {
            case .addType, .addField, .changeType: return change
            case .removeType, .removeField: return nil
            case .changeIndexes:
                guard let before = change.before, var after = change.after else { return nil }
                guard !before.indexes.isSuperset(of: after.indexes) else { return nil }
                after.indexes.formUnion(before.indexes)
                return SchemaChange(.changeIndexes, recordType: change.recordType, before: before, after: after)
            }
        }
    }

    /// `live` with `declared` merged in (new types, new fields, indexes added), as `additions` lists.
    /// - Throws: `BAD_REQUEST` for a declared field whose type differs from the live one, and for a new type or
    ///   field whose name a save would refuse (`CloudKitLimits`); nothing merges.
    public static func merging(_ declared: Schema, into live: Schema) throws(ShareError) -> Schema {
        var merged = live
        for change in additions(declared: declared, live: live) {
            switch change.kind {
            case .changeType:
                if let before = change.before, let after = change.after {
                    throw mismatch(after.type, field: before, recordType: change.recordType, subject: change.address)
                }
            case .addType:
                if let problem = CloudKitLimits.recordTypeProblem(change.recordType) {
                    throw ShareError(.badRequest, problem, subject: change.address)
                }
                merged.recordTypes[change.recordType] =
                    merged.recordTypes[change.recordType]
                    ?? RecordTypeSchema(change.recordType)
            case .addField, .changeIndexes:
                if change.kind == .addField, let name = change.after?.name,
                    let problem = CloudKitLimits.declaredFieldProblem(name, recordType: change.recordType)
                {
                    throw ShareError(.badRequest, problem, subject: change.address)
                }
                if let field = change.after {
                    merged.recordTypes[change.recordType, default: RecordTypeSchema(change.recordType)]
                        .fields[field.name] = field
                }
            case .removeType, .removeField:
                break
            }
        }
        return merged
    }

    /// Production's schema after deploying development's, and what changed.
    /// - Throws: `BAD_REQUEST` listing every change production cannot take (a removed type or field, a
    ///   changed type); nothing is deployed.
    public static func deployment(development: Schema, production: Schema) throws(ShareError)
        -> (schema: Schema, changes: [SchemaChange])
    {
        let changes = changes(from: production, to: development)
        let refused = changes.filter { !$0.isAdditive }
        guard refused.isEmpty else {
            throw ShareError(
                .badRequest,
                "cannot deploy: production is additive-only, and deploying would "
                    + refused.map { "\($0)" }.joined(separator: "; ")
                    + "; put the type or field back in development (or stop changing its type), then deploy")
        }
        return (development, changes)
    }
}
