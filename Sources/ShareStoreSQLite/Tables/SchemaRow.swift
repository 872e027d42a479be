import Foundation
import Synchronization
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
        guard
            let definition = try Data.fetchOne(
                db.cachedStatement(sql: "SELECT definition FROM recordSchema WHERE environment = ?"),
                arguments: [environment])
        else { return Schema() }
        if let known = DecodedSchemas.shared.schema(for: definition) { return known }
        do {
            let schema = try JSONDecoder().decode(Schema.self, from: definition)
            DecodedSchemas.shared.remember(schema, for: definition)
            return schema
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

/// The schemas last decoded, by their stored bytes: every `modifyRecords` call reads its environment's schema,
/// and decoding its JSON anew each time was a fiftieth of an apply of 10,000 records (perf). The bytes are
/// still read in each transaction, so a schema another process changed is decoded again.
final class DecodedSchemas: Sendable {
    static let shared = DecodedSchemas()
    private let entries = Mutex<[(definition: Data, schema: Schema)]>([])

    func schema(for definition: Data) -> Schema? {
        entries.withLock { $0.first { $0.definition == definition }?.schema }
    }

    func remember(_ schema: Schema, for definition: Data) {
        entries.withLock { entries in
            // Two environments' schemas, and the one before a change: a few entries are enough.
            if entries.count >= 4 { entries.removeFirst() }
            entries.append((definition, schema))
        }
    }
}
