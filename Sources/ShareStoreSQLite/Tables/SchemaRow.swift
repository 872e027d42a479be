import Foundation
import GRDB
import ShareKit

/// A row of `recordSchema`: one environment's schema, as the JSON of `Schema`.
struct SchemaRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "recordSchema"
    enum Columns {
        static let environment = Column(CodingKeys.environment)
        static let definition = Column(CodingKeys.definition)
    }

    var environment: CloudKitEnvironment
    var definition: Data

    /// The schema of an environment; empty when nothing was saved in it yet.
    /// - Throws: `INTERNAL_ERROR` when the stored schema cannot be read (a damaged store).
    static func schema(_ db: Database, _ environment: CloudKitEnvironment) throws -> Schema {
        guard let row = try SchemaRow.fetchOne(db, key: environment.rawValue) else { return Schema() }
        do {
            return try JSONDecoder().decode(Schema.self, from: row.definition)
        } catch {
            throw ShareError(.internalError, "the store's \(environment.rawValue) schema cannot be read: \(error)")
        }
    }

    /// Writes an environment's schema whole.
    static func store(_ schema: Schema, _ environment: CloudKitEnvironment, _ db: Database) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try SchemaRow(environment: environment, definition: try encoder.encode(schema)).insert(db, onConflict: .replace)
    }
}
