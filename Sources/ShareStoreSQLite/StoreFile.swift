import Foundation
import GRDB
import Logging
import ShareKit

/// What a store file's path holds before sharelane opens it, read without writing a byte: a store is
/// opened only in a file that is sharelane's or new, never in another program's database.
public enum StoreFile {
    /// What is at the path.
    public enum Kind: Equatable, Sendable {
        /// Nothing: an apply makes the store there.
        case missing
        /// An empty file, or a SQLite database with no table: a store may be made in it.
        case empty
        /// A sharelane store.
        case sharelane
        /// A file SQLite cannot read as a database.
        case notSQLite
        /// Another program's SQLite database: its tables (the first few, by name).
        case foreign(tables: [String])
    }

    /// The first migration every sharelane store has (`StoreMigrations`).
    static let firstMigration = "v1: users, zones, records, shares, changes"

    /// Reads what is at `path`, opening it read-only (a database is neither migrated nor created).
    public static func kind(at path: String) -> Kind {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return .missing }
        guard !isDirectory.boolValue else { return .notSQLite }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        if size == 0 { return .empty }
        // SQLite's own header: anything else is not a database, whatever SQLite would say of it later.
        guard let handle = FileHandle(forReadingAtPath: path) else { return .notSQLite }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        try? handle.close()
        guard header == Data("SQLite format 3\0".utf8) else { return .notSQLite }
        var configuration = Configuration()
        configuration.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db in
                let tables = try String.fetchAll(
                    db,
                    sql:
                        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
                )
                if tables.isEmpty { return .empty }
                if tables.contains("grdb_migrations"),
                    try Bool.fetchOne(
                        db, sql: "SELECT EXISTS (SELECT 1 FROM grdb_migrations WHERE identifier = ?)",
                        arguments: [firstMigration]) == true
                {
                    return .sharelane
                }
                return .foreign(tables: Array(tables.prefix(5)))
            }
        } catch {
            return .notSQLite
        }
    }

    /// Why sharelane will not open a store at `path`, or nil when it may: a file of another program, or one that
    /// is no database at all, is left untouched.
    public static func refusal(at path: String, url: String) -> String? {
        switch kind(at: path) {
        case .missing, .empty, .sharelane:
            return nil
        case .notSQLite:
            return "\(url) is not a SQLite database, so not a sharelane store; it was left untouched: give the path "
                + "of a store, or of a file that does not exist yet (sqlite:.sharelane/store.sqlite)"
        case .foreign(let tables):
            return "\(url) is a SQLite database of another program (tables \(tables.joined(separator: ", "))"
                + "), not a sharelane store; it was left untouched: give the path of a store, or of a file that "
                + "does not exist yet (sqlite:.sharelane/store.sqlite)"
        }
    }

    /// Whether `store` is one `notYetMade` made: a plan of it keeps no cache (the store an apply makes is another).
    public static func isStandIn(_ store: any Store) -> Bool {
        guard let local = store as? SQLiteStore else { return false }
        return local.worlds.path == nil && local.displayName.hasPrefix("sqlite:")
    }

    /// An empty store in memory standing in for a file that does not exist yet, for a command that only
    /// reads (a plan of a new store): the file is not made, and the store has the name the file will have.
    public static func notYetMade(
        path: String, container: String?, environment: CloudKitEnvironment, logger: Logger
    ) throws -> SQLiteStore {
        let world = StoreWorld(container: container ?? StoreWorld.defaultContainer, environment: environment)
        let worlds = try SQLiteWorlds(
            writer: try DatabaseQueue(), world: world, displayName: "sqlite:\(path)", logger: logger)
        return try worlds.sqliteStore(for: world)
    }
}
