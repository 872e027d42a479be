import ShareKit

/// What a plan adds to the live schema before it writes records: the record types, fields and indexes the
/// recipe needs (`schema:` and what its records imply) that the environment's schema lacks.
public struct PlannedSchema: Sendable, Hashable, Codable {
    public var environment: CloudKitEnvironment
    /// Additions only (`addType`, `addField`, `changeIndexes` adding indexes): a schema only grows.
    public var changes: [SchemaChange]

    public init(environment: CloudKitEnvironment, changes: [SchemaChange]) {
        self.environment = environment
        self.changes = changes
    }

    /// The types and fields to extend development's schema with.
    public var additions: Schema {
        var schema = Schema()
        for change in changes {
            schema.recordTypes[change.recordType, default: RecordTypeSchema(change.recordType)].fields
                .merge(change.after.map { [$0.name: $0] } ?? [:]) { _, new in new }
        }
        return schema
    }
}

extension SchemaChange {
    /// The plan action a schema change reads as, for styles: additions create, index changes update.
    var planAction: PlannedChange.Action {
        switch kind {
        case .addType, .addField: .create
        case .changeIndexes, .changeType: .update
        case .removeType, .removeField: .delete
        }
    }
}
