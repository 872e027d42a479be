import Recipe
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

    /// Compares the recipe's schema with the live one.
    /// - Throws: `PlannerError.schemaConflicts` for a field the recipe gives another type than the live
    ///   schema has (at its place in the recipe), and `PlannerError.undeployedSchema` for additions to a
    ///   production schema, which changes only by deploying: nothing is written either way.
    static func plan(_ recipe: Recipe, live: Schema, storeName: String) throws(PlannerError) -> PlannedSchema {
        let changes = SchemaRules.additions(declared: recipe.schema.schema, live: live)
        let conflicts = changes.filter { $0.kind == .changeType }
        if !conflicts.isEmpty {
            throw PlannerError.schemaConflicts(
                conflicts.map { change in
                    let place = recipe.schema.location(change.recordType, change.after?.name).map { "\($0): " } ?? ""
                    return "\(place)field \(change.address) is \(change.before?.typeName ?? "") in the "
                        + "\(recipe.environment.rawValue) schema of \(storeName), and the recipe gives it "
                        + "\(change.after?.typeName ?? ""); a field's type is fixed once written: keep "
                        + "\(change.before?.typeName ?? "") in the recipe, or use a new field name"
                })
        }
        if recipe.environment == .production, !changes.isEmpty {
            throw PlannerError.undeployedSchema(storeName: storeName, changes: changes.map(\.description))
        }
        return PlannedSchema(environment: recipe.environment, changes: changes)
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
