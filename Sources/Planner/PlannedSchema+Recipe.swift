import PlanModel
import Recipe
import ShareKit

extension PlannedSchema {
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
