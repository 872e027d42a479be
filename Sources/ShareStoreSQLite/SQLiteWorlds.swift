import Foundation
import GRDB
import Logging
import ShareKit

/// The worlds of one embedded store: a database per CloudKit container and environment.
///
/// A file store keeps its first world in the file itself (`sqlite:PATH`), which records the container and
/// environment it holds (table `storeWorld`), and every other world beside it, in
/// `PATH.worlds/CONTAINER/ENVIRONMENT.sqlite`. A file written before containers were kept apart records
/// none: the first container and environment to open it claim it, and a warning says so. `memory:` keeps
/// each world in a database of its own, gone with the store.
///
/// Each world is a complete store (users, zones, records, shares, subscriptions, change feeds, assets and
/// its environment's schema), so nothing one world holds can be read or changed through another.
public final class SQLiteWorlds: StoreWorlds, @unchecked Sendable {
    /// `sqlite:PATH` or `memory:`.
    public let displayName: String
    let logger: Logger
    /// The file of the first world, or nil for `memory:`.
    let path: String?

    private let lock = NSLock()
    private var writers: [StoreWorld: any DatabaseWriter] = [:]
    /// The file store's own database and the world it holds (nil until one claims it).
    private var home: (writer: any DatabaseWriter, world: StoreWorld?)?

    /// Opens (or creates) the store file at `path`, creating its parent directory, in WAL mode.
    /// - Throws: `ShareError` when the file cannot be created or opened, or holds a schema newer than this
    ///   sharelane.
    public init(path: String, logger: Logger) throws {
        self.displayName = "sqlite:\(path)"
        self.logger = logger
        self.path = path
        let writer = try Self.openFile(path, displayName: displayName)
        let world = try Self.recordedWorld(writer, displayName: displayName)
        home = (writer, world)
    }

    /// Worlds in memory, each created empty when first named.
    public init(inMemoryWith logger: Logger) {
        self.displayName = "memory:"
        self.logger = logger
        self.path = nil
    }

    /// Worlds in memory whose `world` is `writer` (tests hand in a `DatabaseQueue()` of their own).
    init(writer: any DatabaseWriter, world: StoreWorld, displayName: String, logger: Logger) throws {
        self.displayName = displayName
        self.logger = logger
        self.path = nil
        try Self.migrate(writer, displayName: displayName)
        writers[world] = writer
    }

    /// The world a file store's own file holds, or nil until one claims it (and for `memory:`).
    public var homeWorld: StoreWorld? {
        lock.withLock { home?.world }
    }

    // MARK: - Opening a world

    /// The embedded store of one world.
    /// - Throws: `ShareError` (`BAD_REQUEST`) for a container identifier that cannot be one, or when the
    ///   world's file cannot be opened.
    public func sqliteStore(for world: StoreWorld) throws -> SQLiteStore {
        SQLiteStore(writer: try writer(for: world), world: world, worlds: self)
    }

    public func store(for world: StoreWorld) throws -> any Store {
        try sqliteStore(for: world)
    }

    /// The database of a world, opened (and created) the first time it is named.
    func writer(for world: StoreWorld) throws -> any DatabaseWriter {
        if let problem = StoreWorld.containerProblem(world.container) {
            throw ShareError(.badRequest, problem, subject: world.container)
        }
        return try lock.withLock {
            if let writer = writers[world] { return writer }
            let writer = try openWorld(world)
            writers[world] = writer
            return writer
        }
    }

    /// Called with the lock held.
    private func openWorld(_ world: StoreWorld) throws -> any DatabaseWriter {
        guard let path, let home else {
            let queue = try DatabaseQueue()
            try Self.migrate(queue, displayName: displayName)
            return queue
        }
        if home.world == world { return home.writer }
        if home.world == nil {
            let claimed = try claim(home.writer, for: world)
            self.home = (home.writer, claimed)
            if claimed == world { return home.writer }
        }
        let file = Self.worldFile(of: path, world)
        let existed = FileManager.default.fileExists(atPath: file)
        let writer = try Self.openFile(file, displayName: displayName)
        if !existed, let homeWorld = self.home?.world, homeWorld.container == world.container {
            try carrySchema(of: world.environment, from: home.writer, to: writer)
        }
        return writer
    }

    /// Records `world` as the world the home file holds, unless another process did first; answers the
    /// world the file holds.
    private func claim(_ writer: any DatabaseWriter, for world: StoreWorld) throws -> StoreWorld {
        let (claimed, hadData) = try Self.guarded(displayName) {
            try writer.write { db -> (StoreWorld, Bool) in
                if let recorded = try Self.recordedWorld(db) { return (recorded, false) }
                try db.execute(
                    sql: "INSERT INTO storeWorld (id, container, environment) VALUES (1, ?, ?)",
                    arguments: [world.container, world.environment.rawValue])
                let users = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM user") ?? 0
                let zones = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM zone WHERE scope != 'public'") ?? 0
                let publicRecords = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM record") ?? 0
                return (world, users + zones + publicRecords > 0)
            }
        }
        if hadData {
            // Before containers were kept apart every container and environment reached this one file; its
            // data now belongs to the first of them to open it, which is the one that wrote it where a
            // project names one container (Docs/CloudKit.md, "Containers and environments").
            logger.warning(
                "\(displayName) was written before containers and environments were kept apart: its data is now \(claimed), the first to open it; other containers and environments start empty"
            )
        }
        return claimed
    }

    /// A file written before containers were kept apart held both environments' schemas: the other
    /// environment of its container starts from the schema it had there (a deploy made before is kept).
    private func carrySchema(
        of environment: CloudKitEnvironment, from home: any DatabaseWriter, to writer: any DatabaseWriter
    ) throws {
        try Self.guarded(displayName) {
            guard
                let definition = try home.read({ db in
                    try Data.fetchOne(
                        db, sql: "SELECT definition FROM recordSchema WHERE environment = ?",
                        arguments: [environment.rawValue])
                })
            else { return }
            try writer.write { db in
                try db.execute(
                    sql: "INSERT OR REPLACE INTO recordSchema (environment, definition) VALUES (?, ?)",
                    arguments: [environment.rawValue, definition])
            }
        }
    }

    // MARK: - Listing

    public func worlds() throws -> [StoreWorld] {
        var found = Set(lock.withLock { writers.keys })
        if let homeWorld { found.insert(homeWorld) }
        if let path {
            let folder = URL(fileURLWithPath: Self.worldsFolder(of: path))
            let containers = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            for encoded in containers {
                guard let container = encoded.removingPercentEncoding else { continue }
                for environment in CloudKitEnvironment.allCases {
                    let file = folder.appendingPathComponent(encoded).appendingPathComponent(
                        "\(environment.rawValue).sqlite")
                    if FileManager.default.fileExists(atPath: file.path) {
                        found.insert(StoreWorld(container: container, environment: environment))
                    }
                }
            }
        }
        return found.sorted {
            ($0.container, $0.environment == .development ? 0 : 1)
                < ($1.container, $1.environment == .development ? 0 : 1)
        }
    }

    // MARK: - Files

    /// Where the worlds other than the home file's are kept: `PATH.worlds`.
    public static func worldsFolder(of path: String) -> String { path + ".worlds" }

    /// `PATH.worlds/CONTAINER/ENVIRONMENT.sqlite`; the container percent-encoded beyond letters, digits, `.`,
    /// `-` and `_` (which `StoreWorld.containerProblem` already admits alone).
    static func worldFile(of path: String, _ world: StoreWorld) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: ".-_")
        let container = world.container.addingPercentEncoding(withAllowedCharacters: allowed) ?? world.container
        return worldsFolder(of: path) + "/\(container)/\(world.environment.rawValue).sqlite"
    }

    static func openFile(_ path: String, displayName: String) throws -> any DatabaseWriter {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw ShareError(
                .internalError,
                "cannot create the directory \(directory.path) for the store: \(error.localizedDescription)",
                subject: displayName)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // WAL with NORMAL sync: durable across a crash of the process, one fsync per checkpoint.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        let pool: DatabasePool
        do {
            pool = try openPool(path: path, configuration: configuration)
        } catch {
            throw ShareError(
                .internalError,
                "cannot open the store file \(path): \(error); check it is a sharelane store and writable",
                subject: displayName)
        }
        try migrate(pool, displayName: displayName)
        return pool
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

    static func migrate(_ writer: any DatabaseWriter, displayName: String) throws {
        do {
            try SQLiteStore.migrate(writer)
        } catch {
            throw ShareError(.internalError, "cannot prepare the store \(displayName): \(error)", subject: displayName)
        }
    }

    static func recordedWorld(_ writer: any DatabaseWriter, displayName: String) throws -> StoreWorld? {
        try guarded(displayName) { try writer.read { try recordedWorld($0) } }
    }

    static func recordedWorld(_ db: Database) throws -> StoreWorld? {
        guard let row = try Row.fetchOne(db, sql: "SELECT container, environment FROM storeWorld WHERE id = 1"),
            let environment = CloudKitEnvironment(rawValue: row["environment"])
        else { return nil }
        return StoreWorld(container: row["container"], environment: environment)
    }

    static func guarded<T>(_ displayName: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ShareError {
            throw error
        } catch {
            throw ShareError(
                .internalError, "reading the worlds of \(displayName) failed: \(error)", subject: displayName)
        }
    }
}

// MARK: - Snapshots

extension SQLiteWorlds {
    /// A world copied into a database in memory with SQLite's backup API: a page-for-page copy, taken in one
    /// read transaction.
    final class Snapshot: WorldSnapshot, @unchecked Sendable {
        let copy: DatabaseQueue

        init(_ copy: DatabaseQueue) { self.copy = copy }

        func serialized() throws -> Data {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "sharelane-snapshot-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("world.sqlite")
            do {
                let target = try DatabaseQueue(path: file.path)
                try copy.backup(to: target)
                try target.close()
            } catch {
                throw ShareError(.internalError, "cannot write a snapshot: \(error)")
            }
            return try Data(contentsOf: file)
        }
    }

    public func snapshot(_ world: StoreWorld) async throws -> any WorldSnapshot {
        let writer = try writer(for: world)
        return try Self.guarded(displayName) {
            let copy = try DatabaseQueue()
            try writer.backup(to: copy)
            return Snapshot(copy)
        }
    }

    public func restore(_ world: StoreWorld, to snapshot: any WorldSnapshot) async throws {
        guard let snapshot = snapshot as? Snapshot else {
            throw ShareError(.badRequest, "this snapshot is not of a SQLite store; take it from this store")
        }
        let writer = try writer(for: world)
        try Self.guarded(displayName) {
            // Staged apart, so that the world's file takes it in one backup: its own record of the world it
            // holds kept, and a new epoch, so that change tokens handed out since the snapshot are refused.
            let recorded = try Self.recordedWorld(writer, displayName: displayName)
            let staged = try DatabaseQueue()
            try snapshot.copy.backup(to: staged)
            try staged.write { db in
                try db.execute(sql: "DELETE FROM storeWorld")
                if let recorded {
                    try db.execute(
                        sql: "INSERT INTO storeWorld (id, container, environment) VALUES (1, ?, ?)",
                        arguments: [recorded.container, recorded.environment.rawValue])
                }
                try db.execute(sql: "UPDATE counter SET epoch = ?", arguments: [ChangeSequence.newEpoch()])
            }
            try staged.backup(to: writer)
        }
        logger.info("restored a snapshot", metadata: ["world": "\(world)", "store": "\(displayName)"])
    }

    public func snapshot(serialized data: Data) throws -> any WorldSnapshot {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sharelane-snapshot-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("world.sqlite")
        try data.write(to: file)
        do {
            let source = try DatabaseQueue(path: file.path)
            defer { try? source.close() }
            let copy = try DatabaseQueue()
            try source.backup(to: copy)
            // A snapshot of an older sharelane is brought up to this one's tables.
            try Self.migrate(copy, displayName: displayName)
            return Snapshot(copy)
        } catch {
            throw ShareError(.badRequest, "these bytes are not a snapshot of a sharelane store: \(error)")
        }
    }
}
