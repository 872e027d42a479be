import Foundation
import Synchronization
import GRDB

/// Whether a database given to the store (a snapshot file's world, a snapshot restored) is one of
/// sharelane's own: whole, and with exactly the schema its migrations make. A trigger or view brought in with
/// it would run inside the store's own writes (and survive resets, as the reset point keeps it), so anything
/// the migrations do not make is refused, not ignored.
enum WorldFileCheck {
    /// What is wrong with `db` as a world's database, or nil. It only reads.
    static func problem(in db: Database) throws -> String? {
        let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check(5)")
        if integrity != ["ok"] {
            return "it fails SQLite's integrity check (\(integrity.prefix(2).joined(separator: "; ")))"
        }
        guard try db.tableExists("grdb_migrations") else {
            return "it has no record of sharelane's migrations (table grdb_migrations)"
        }
        let known = StoreMigrations.migrator.migrations
        let applied = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
        if let unknown = applied.first(where: { !known.contains($0) }) {
            return "it was written by a newer sharelane (migration \"\(unknown)\"): update sharelane"
        }
        // Migrations run in order: what a file has applied is the first N of them.
        let count = Set(applied).count
        guard count > 0, Set(known.prefix(count)) == Set(applied) else {
            return "its migrations (\(applied.count)) are not the first ones of sharelane's, in order"
        }
        let expected = try referenceSchema(upTo: known[count - 1])
        let actual = try schema(of: db)
        for (key, sql) in actual.sorted(by: { $0.key < $1.key }) {
            guard let wanted = expected[key] else {
                return "it holds a \(key.type) \"\(key.name)\" that sharelane's store does not have"
            }
            if wanted != sql { return "its \(key.type) \"\(key.name)\" differs from sharelane's" }
        }
        if let missing = expected.keys.sorted().first(where: { actual[$0] == nil }) {
            return "it lacks the \(missing.type) \"\(missing.name)\" of sharelane's store"
        }
        return nil
    }

    struct Entry: Hashable, Comparable {
        var type: String
        var name: String

        static func < (lhs: Entry, rhs: Entry) -> Bool { (lhs.type, lhs.name) < (rhs.type, rhs.name) }
    }

    /// Every table, index, view and trigger, with its SQL, spaces folded. SQLite's own (`sqlite_sequence`,
    /// `sqlite_stat1`, automatic indexes) are its business and left out.
    static func schema(of db: Database) throws -> [Entry: String] {
        let rows = try Row.fetchAll(
            db, sql: "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        var schema: [Entry: String] = [:]
        for row in rows {
            let sql: String = row["sql"] ?? ""
            schema[Entry(type: row["type"], name: row["name"])] = sql.split(whereSeparator: \.isWhitespace).joined(
                separator: " ")
        }
        return schema
    }

    private static let references = Mutex<[String: [Entry: String]]>([:])

    /// The schema sharelane's migrations make, up to and including `identifier`: made once in memory.
    static func referenceSchema(upTo identifier: String) throws -> [Entry: String] {
        if let known = references.withLock({ $0[identifier] }) { return known }
        let database = try DatabaseQueue()
        try StoreMigrations.migrator.migrate(database, upTo: identifier)
        let schema = try database.read(schema(of:))
        references.withLock { $0[identifier] = schema }
        return schema
    }
}
