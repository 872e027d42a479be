import Foundation
import GRDB
import Logging
import ShareKit

/// The embedded store: a SQLite file (or memory) on GRDB with CloudKit's data model and sharing rules.
///
/// It acts as any user: every call names the user it is made as, and is checked with `AccessRules` as
/// CloudKit would check it. Each `modifyRecords` or `modifyZones` call runs in one transaction. Names it
/// hands out (user record names, hierarchy share names, short GUIDs, change tags) are deterministic, so a
/// recipe applied twice on two machines gives the same data.
public final class SQLiteStore: Store {
    /// `sqlite:PATH` or `memory:`.
    public let displayName: String
    public var capabilities: StoreCapabilities {
        StoreCapabilities(actsAsAnyUser: true, canReset: true, batchesInOneTransaction: true, readsZoneTags: true)
    }

    /// The environment whose schema writes and queries follow; the same file holds both environments'
    /// schemas and one set of records (a local store is one container).
    public let environment: CloudKitEnvironment

    let writer: any DatabaseWriter
    let logger: Logger

    /// Where the local files of `ASSETID` values (a recipe's `!asset`) are: a record save naming one keeps
    /// the file's bytes in the store (table `asset`) and saves the asset as `#fnv1a64:HEX;size=N`, as
    /// CloudKit keeps an asset's bytes, not a path. The command line sets it from the recipe; unset, such a
    /// save is refused.
    public let assetFiles = AssetFileResolver()

    /// Opens (or creates) the store file at `path`, creating its parent directory, in WAL mode.
    /// - Throws: when the file cannot be created or opened, or holds a schema newer than this sharelane.
    public convenience init(path: String, environment: CloudKitEnvironment = .development, logger: Logger) throws {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ShareError(
                .internalError,
                "cannot create the directory \(directory.path) for the store: \(error.localizedDescription)",
                subject: "sqlite:\(path)")
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // WAL with NORMAL sync: durable across a crash of the process, one fsync per checkpoint.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        let pool: DatabasePool
        do {
            pool = try Self.openPool(path: path, configuration: configuration)
        } catch {
            throw ShareError(
                .internalError,
                "cannot open the store file \(path): \(error); check it is a sharelane store and writable",
                subject: "sqlite:\(path)")
        }
        try self.init(writer: pool, displayName: "sqlite:\(path)", environment: environment, logger: logger)
    }

    /// Opens the pool of a store file. Several processes opening one new file at once can find it being
    /// switched to WAL by another: SQLite then answers `PRAGMA journal_mode = WAL` with SQLITE_BUSY at once,
    /// without the busy timeout (six stores opening a new file at once met it in about one file in twenty).
    /// The switch takes milliseconds, so the open is tried again, for up to a second.
    static func openPool(path: String, configuration: Configuration) throws -> DatabasePool {
        var attempt = 1
        while true {
            do {
                return try DatabasePool(path: path, configuration: configuration)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && attempt < 50 {
                attempt += 1
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
    }

    /// A store in memory (`memory:`): the same code as the file store, gone when released.
    public static func inMemory(
        environment: CloudKitEnvironment = .development, logger: Logger = Logger(label: "sharelane.store.memory")
    ) throws -> SQLiteStore {
        try SQLiteStore(writer: DatabaseQueue(), displayName: "memory:", environment: environment, logger: logger)
    }

    /// A store over any GRDB database (tests use an in-memory `DatabaseQueue()`).
    /// - Throws: when the schema cannot be migrated.
    public convenience init(writer: any DatabaseWriter, logger: Logger = Logger(label: "sharelane.store")) throws {
        let path = writer.path
        try self.init(
            writer: writer, displayName: path == ":memory:" || path.isEmpty ? "memory:" : "sqlite:\(path)",
            logger: logger)
    }

    init(
        writer: any DatabaseWriter, displayName: String, environment: CloudKitEnvironment = .development,
        logger: Logger
    ) throws {
        self.writer = writer
        self.displayName = displayName
        self.environment = environment
        self.logger = logger
        do {
            try Self.migrate(writer)
        } catch {
            throw ShareError(
                .internalError, "cannot prepare the store \(displayName): \(error)", subject: displayName)
        }
        logger.debug("opened store", metadata: ["store": "\(displayName)"])
    }

    /// Migrates the schema, safely when several processes open a new file at once: each migration runs in
    /// its own transaction, so a process that finds a migration already applied by another (its transaction
    /// fails, "table … already exists", and rolls back) tries again and sees it applied.
    static func migrate(_ writer: any DatabaseWriter) throws {
        let migrator = StoreMigrations.migrator
        var attempt = 0
        while true {
            attempt += 1
            do {
                try migrator.migrate(writer)
                return
            } catch {
                let done = (try? writer.read { try migrator.hasCompletedMigrations($0) }) ?? false
                if done { return }
                if attempt >= 10 { throw error }
                // Another process is migrating: give it a moment (10 attempts, 20–200 ms apart).
                Thread.sleep(forTimeInterval: 0.02 * Double(attempt))
            }
        }
    }

    /// The same database acting in another environment (no migration: this store ran them).
    private init(sharing store: SQLiteStore, environment: CloudKitEnvironment) {
        self.writer = store.writer
        self.displayName = store.displayName
        self.environment = environment
        self.logger = store.logger
    }

    /// This store, acting in `environment`.
    public func inEnvironment(_ environment: CloudKitEnvironment) -> any Store {
        environment == self.environment ? self : SQLiteStore(sharing: self, environment: environment)
    }

    static var now: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    func write<T: Sendable>(_ what: String, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await writer.write(body)
        } catch let error as ShareError {
            throw error
        } catch {
            throw ShareError(.internalError, "\(what) failed in \(displayName): \(error)", subject: displayName)
        }
    }

    /// Runs `body` in a read transaction on the calling thread, not on a reader's queue as GRDB's `async` read
    /// does: the hand-over to that queue and back was two of the five thread switches of each request the
    /// emulator answers. A read of a file store waits for no writer (WAL), at most for one of the
    /// pool's connections that another thread is reading with and gives back without suspending; a `memory:`
    /// store's read waits for a write in progress. Writes keep their queue: a write can wait seconds for
    /// another process's transaction, which must not hold a thread of the cooperative pool.
    func read<T: Sendable>(_ what: String, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try Self.readInPlace(writer, body)
        } catch let error as ShareError {
            throw error
        } catch {
            throw ShareError(.internalError, "\(what) failed in \(displayName): \(error)", subject: displayName)
        }
    }

    /// GRDB's synchronous read: a function of its own, where the `async` overload is not chosen.
    private static func readInPlace<T>(_ writer: any DatabaseWriter, _ body: (Database) throws -> T) throws -> T {
        try writer.read(body)
    }

    // MARK: - Beyond the protocol

    /// Every user the store knows, by email address (local stores list their users; CloudKit does not).
    public func allUsers() async throws -> [User] {
        try await read("listing users") { db in
            try UserRow.order(UserRow.Columns.email, UserRow.Columns.recordName).fetchAll(db).map(\.user)
        }
    }
}

// MARK: - UserListing

extension SQLiteStore: UserListing {}
