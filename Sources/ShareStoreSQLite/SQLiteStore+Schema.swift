import GRDB
import ShareKit

// MARK: - Schema

extension SQLiteStore {
    /// Each environment's schema is kept in that environment's world, beside its records.
    public func schema(in environment: CloudKitEnvironment, as user: UserRecordName) async throws -> Schema {
        try Self.admit(user, .read, .public)
        let store = try sameContainer(in: environment)
        return try await store.read("reading the \(environment.rawValue) schema") { db in
            try SchemaRow.schema(db, environment)
        }
    }

    public func extendSchema(_ schema: Schema, as user: UserRecordName) async throws -> [SchemaChange] {
        try Self.admit(user, .write, .public)
        let development = try sameContainer(in: .development)
        return try await development.write("extending the development schema") { db in
            let live = try SchemaRow.schema(db, .development)
            let merged = try SchemaRules.merging(schema, into: live)
            let changes = SchemaRules.changes(from: live, to: merged)
            if !changes.isEmpty { try SchemaRow.store(merged, .development, db) }
            return changes
        }
    }

    /// Development's schema is read, then production's written in one transaction of production's world:
    /// a development schema extended meanwhile is deployed by the next deploy, as on CloudKit.
    public func deploySchema(as user: UserRecordName) async throws -> [SchemaChange] {
        try Self.admit(user, .write, .public)
        let development = try await sameContainer(in: .development).read("reading the development schema") { db in
            try SchemaRow.schema(db, .development)
        }
        return try await sameContainer(in: .production).write("deploying the schema") { db in
            let deployment = try SchemaRules.deployment(
                development: development, production: try SchemaRow.schema(db, .production))
            if !deployment.changes.isEmpty { try SchemaRow.store(deployment.schema, .production, db) }
            return deployment.changes
        }
    }

    /// This store's container in `environment`.
    private func sameContainer(in environment: CloudKitEnvironment) throws -> SQLiteStore {
        environment == self.environment ? self : try worlds.sqliteStore(for: world.inEnvironment(environment))
    }
}
