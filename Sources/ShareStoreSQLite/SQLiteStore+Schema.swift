import GRDB
import ShareKit

// MARK: - Schema

extension SQLiteStore {
    public func schema(in environment: CloudKitEnvironment, as user: UserRecordName) async throws -> Schema {
        try Self.admit(user, .read, .public)
        return try await read("reading the \(environment.rawValue) schema") { db in
            try SchemaRow.schema(db, environment)
        }
    }

    public func extendSchema(_ schema: Schema, as user: UserRecordName) async throws -> [SchemaChange] {
        try Self.admit(user, .write, .public)
        return try await write("extending the development schema") { db in
            let live = try SchemaRow.schema(db, .development)
            let merged = try SchemaRules.merging(schema, into: live)
            let changes = SchemaRules.changes(from: live, to: merged)
            if !changes.isEmpty { try SchemaRow.store(merged, .development, db) }
            return changes
        }
    }

    public func deploySchema(as user: UserRecordName) async throws -> [SchemaChange] {
        try Self.admit(user, .write, .public)
        return try await write("deploying the schema") { db in
            let deployment = try SchemaRules.deployment(
                development: try SchemaRow.schema(db, .development),
                production: try SchemaRow.schema(db, .production))
            if !deployment.changes.isEmpty { try SchemaRow.store(deployment.schema, .production, db) }
            return deployment.changes
        }
    }
}
