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

    /// The container and environment this store is: a world of its own (`SQLiteWorlds`), whose users,
    /// zones, records, shares, subscriptions and assets no other world sees.
    public let world: StoreWorld
    /// The container of the world this store reads and writes.
    public var container: String? { world.container }
    /// The environment whose schema writes and queries follow.
    public var environment: CloudKitEnvironment { world.environment }
    /// The other worlds of the same file (or of the same `memory:`), for `inEnvironment` and the schema.
    public let worlds: SQLiteWorlds

    let writer: any DatabaseWriter
    let logger: Logger

    /// Opens (or creates) the world of the store file at `path`, in WAL mode. With no `container`, the
    /// container the file holds (or, for a new file, the default one).
    /// - Throws: when the file cannot be created or opened, or holds a schema newer than this sharelane.
    public convenience init(
        path: String, container: String? = nil, environment: CloudKitEnvironment = .development, logger: Logger
    ) throws {
        let worlds = try SQLiteWorlds(path: path, logger: logger)
        let world = StoreWorld(
            container: container ?? worlds.homeWorld?.container ?? StoreWorld.defaultContainer,
            environment: environment)
        self.init(writer: try worlds.writer(for: world), world: world, worlds: worlds)
    }

    /// A store in memory (`memory:`): the same code as the file store, gone when released.
    public static func inMemory(
        container: String = StoreWorld.defaultContainer, environment: CloudKitEnvironment = .development,
        logger: Logger = Logger(label: "sharelane.store.memory")
    ) throws -> SQLiteStore {
        try SQLiteWorlds(inMemoryWith: logger).sqliteStore(
            for: StoreWorld(container: container, environment: environment))
    }

    /// A store over any GRDB database (tests use an in-memory `DatabaseQueue()`), as the default container
    /// in development.
    /// - Throws: when the schema cannot be migrated.
    public convenience init(writer: any DatabaseWriter, logger: Logger = Logger(label: "sharelane.store")) throws {
        let path = writer.path
        let world = StoreWorld(container: StoreWorld.defaultContainer, environment: .development)
        let worlds = try SQLiteWorlds(
            writer: writer, world: world,
            displayName: path == ":memory:" || path.isEmpty ? "memory:" : "sqlite:\(path)", logger: logger)
        self.init(writer: writer, world: world, worlds: worlds)
    }

    /// One world's store over its migrated database (`SQLiteWorlds` opens and migrates it).
    init(writer: any DatabaseWriter, world: StoreWorld, worlds: SQLiteWorlds) {
        self.writer = writer
        self.world = world
        self.worlds = worlds
        self.displayName = worlds.displayName
        self.logger = worlds.logger
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

    /// The same container in another environment: a world of its own, with its own records and schema.
    /// - Throws: when that world's file cannot be opened.
    public func inEnvironment(_ environment: CloudKitEnvironment) throws -> any Store {
        environment == self.environment ? self : try worlds.sqliteStore(for: world.inEnvironment(environment))
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

// MARK: - LocalWorldStore

extension SQLiteStore: LocalWorldStore {}

// MARK: - KeepsAssetBytes

extension SQLiteStore: KeepsAssetBytes {}
