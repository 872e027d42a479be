import Foundation
import GRDB
import Logging
import ShareKit
import Synchronization

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
public final class SQLiteWorlds: StoreWorlds, Sendable {
    /// How many worlds one store holds, and how many of a file store's it keeps open at once.
    public typealias Limits = WorldLimits

    /// `sqlite:PATH` or `memory:`.
    public let displayName: String
    let logger: Logger
    /// The file of the first world, or nil for `memory:`.
    let path: String?
    public let limits: Limits

    /// The open worlds and what the store knows of the others, shared by every request's task.
    struct Pool {
        /// The worlds open now: every world of `memory:`, at most `limits.openWorlds` of a file store.
        var writers: [StoreWorld: any DatabaseWriter] = [:]
        /// When each open world was last asked for, to close the least recently used.
        var lastUse: [StoreWorld: UInt64] = [:]
        var uses: UInt64 = 0
        /// The worlds of a file store, found on disk the first time a new one is about to be made, and those
        /// made since: what the limit on worlds counts.
        var known: Set<StoreWorld>?
        /// Worlds whose file would not open, and why, so that the warning naming each is given once.
        var damaged: [StoreWorld: String] = [:]
        /// The file store's own database and the world it holds (nil until one claims it).
        /// Its writer is opened when a world first needs it: GRDB's pool writes to a file as it opens it (its
        /// write-ahead log is never left empty), and a store only read at start (`serve --import` refused)
        /// must be left as it was, byte for byte.
        var home: (writer: (any DatabaseWriter)?, world: StoreWorld?)?

        /// Forgets the open database of `world` (a store handed out before keeps it until it is done).
        mutating func letGo(of world: StoreWorld) {
            writers[world] = nil
            lastUse[world] = nil
        }
    }
    let pool: Mutex<Pool>

    /// Opens the store file at `path` (or creates it, and its parent directory, in WAL mode). An existing file
    /// is only read, for the world it holds; it and the worlds beside it are opened to be written when first
    /// asked for, not before.
    /// - Throws: `ShareError` when the file cannot be created or read; a schema newer than this sharelane is
    ///   refused when the file is first opened to be written.
    public init(path: String, limits: Limits = .standard, logger: Logger) throws {
        let displayName = "sqlite:\(path)"
        self.displayName = displayName
        self.logger = logger
        self.path = path
        self.limits = limits
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        var pool = Pool()
        if size > 0 {
            pool.home = (nil, try Self.probedWorld(path, displayName: displayName))
        } else {
            let writer = try Self.openFile(path, displayName: displayName)
            pool.home = (writer, try Self.recordedWorld(writer, displayName: displayName))
        }
        self.pool = Mutex(pool)
    }

    /// The world an existing store file records, read without writing to it: a plain connection reads and
    /// leaves the file as it found it. A file of an older sharelane may have no table `storeWorld` yet.
    static func probedWorld(_ path: String, displayName: String) throws -> StoreWorld? {
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db in try db.tableExists("storeWorld") ? try recordedWorld(db) : nil }
        } catch {
            throw ShareError(
                .internalError,
                "cannot open the store file \(path): \(error); check it is a sharelane store and readable",
                subject: displayName)
        }
    }

    /// The home file's writer, opened (and migrated) the first time a world needs it.
    func homeWriter(_ pool: inout Pool) throws -> any DatabaseWriter {
        guard let path, let home = pool.home else {
            throw ShareError(.internalError, "\(displayName) has no store file")
        }
        if let writer = home.writer { return writer }
        let writer = try Self.openFile(path, displayName: displayName)
        pool.home = (writer, try Self.recordedWorld(writer, displayName: displayName) ?? home.world)
        return writer
    }

    /// Worlds in memory, each created empty when first named.
    public init(inMemoryWith logger: Logger, limits: Limits = .standard) {
        self.displayName = "memory:"
        self.logger = logger
        self.path = nil
        self.limits = limits
        self.pool = Mutex(Pool())
    }

    /// Worlds in memory whose `world` is `writer` (tests hand in a `DatabaseQueue()` of their own).
    init(writer: any DatabaseWriter, world: StoreWorld, displayName: String, logger: Logger) throws {
        self.displayName = displayName
        self.logger = logger
        self.path = nil
        self.limits = .standard
        try Self.migrate(writer, displayName: displayName)
        var pool = Pool()
        pool.writers[world] = writer
        self.pool = Mutex(pool)
    }

    /// The world a file store's own file holds, or nil until one claims it (and for `memory:`).
    public var homeWorld: StoreWorld? {
        pool.withLock { $0.home?.world }
    }

    /// How many world files are open now (the home file not counted), for tests of the bound.
    var openWorldCount: Int {
        pool.withLock { pool in pool.writers.keys.filter { $0 != pool.home?.world }.count }
    }

    // MARK: - Opening a world

    /// The embedded store of one world.
    /// - Throws: `ShareError`: `BAD_REQUEST` for a container identifier that cannot be one,
    ///   `QUOTA_EXCEEDED` for a new world past `limits.worlds`, `INTERNAL_ERROR` when the world's file cannot
    ///   be opened.
    public func sqliteStore(for world: StoreWorld) throws -> SQLiteStore {
        SQLiteStore(writer: try writer(for: world), world: world, worlds: self)
    }

    public func store(for world: StoreWorld) throws -> any Store {
        try sqliteStore(for: world)
    }

    /// The database of a world, opened (and created) when it is asked for and not open.
    func writer(for world: StoreWorld) throws -> any DatabaseWriter {
        if let problem = StoreWorld.containerProblem(world.container) {
            throw ShareError(.badRequest, problem, subject: world.container)
        }
        return try pool.withLock { pool in
            pool.uses += 1
            if let writer = pool.writers[world] {
                pool.lastUse[world] = pool.uses
                return writer
            }
            let writer = try openWorld(world, &pool)
            pool.writers[world] = writer
            pool.lastUse[world] = pool.uses
            closeLeastRecentlyUsed(&pool)
            return writer
        }
    }

    /// Lets go of the least recently used world files past `limits.openWorlds`. A store handed out before
    /// keeps its database until it is done with it (GRDB closes a database when the last holder lets go), so
    /// a request under way is never cut short.
    private func closeLeastRecentlyUsed(_ pool: inout Pool) {
        guard path != nil else { return }  // a world in memory is its only copy
        while pool.writers.count > limits.openWorlds {
            guard let oldest = pool.lastUse.min(by: { $0.value < $1.value })?.key else { return }
            pool.letGo(of: oldest)
        }
    }

    /// The refusal of a world past the limit: CloudKit's answer to a quota met, with the calls of serve that
    /// free a place (a file's world keeps its place when emptied: its file stays).
    private func overLimit(_ world: StoreWorld) -> ShareError {
        let remove = "DELETE /_sharelane/worlds/CONTAINER (or CONTAINER/ENVIRONMENT)"
        let free =
            path == nil
            ? "free one with \(remove) or POST /_sharelane/reset {\"to\": \"empty\"} (with its container, or none "
                + "for every world)"
            : "free one with \(remove)"
        return ShareError(
            .quotaExceeded,
            "this store holds \(limits.worlds) containers and environments, its limit: \(world) would be one more; "
                + "\(free), or serve another store",
            subject: world.description)
    }

    private func openWorld(_ world: StoreWorld, _ pool: inout Pool) throws -> any DatabaseWriter {
        guard let path, let home = pool.home else {
            if pool.writers.count >= limits.worlds { throw overLimit(world) }
            let queue = try DatabaseQueue()
            try Self.migrate(queue, displayName: displayName)
            return queue
        }
        if home.world == world { return try homeWriter(&pool) }
        if home.world == nil {
            let writer = try homeWriter(&pool)
            let claimed = try pool.home?.world ?? claim(writer, for: world, &pool)
            pool.home = (writer, claimed)
            if claimed == world { return writer }
        }
        let file = Self.worldFile(of: path, world)
        let existed = FileManager.default.fileExists(atPath: file)
        if !existed {
            let worlds = knownWorlds(&pool)
            if worlds.count >= limits.worlds && !worlds.contains(world) { throw overLimit(world) }
        } else if (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) == 0 {
            logger.warning("the file of \(world), \(file), was empty: the world starts empty")
        }
        let writer: any DatabaseWriter
        do {
            writer = try Self.openFile(file, displayName: displayName)
        } catch let error as ShareError where existed {
            // One world's damaged file (overwritten or made unreadable by hand) costs that world only: the
            // others, and the store, carry on. It is tried again each time, so that moving the file aside
            // starts the world empty at once; the warning is given once.
            if pool.damaged.updateValue(error.reason, forKey: world) == nil {
                logger.warning(
                    "the world \(world) cannot be opened, its file \(file) is damaged or unreadable; move the file aside to start the world empty: \(error.reason)"
                )
            }
            throw Self.damage(of: world)
        }
        pool.damaged[world] = nil
        pool.known?.insert(world)
        if !existed, let homeWorld = pool.home?.world, homeWorld.container == world.container {
            try carrySchema(of: world.environment, from: try homeWriter(&pool), to: writer)
        }
        return writer
    }

    /// What a request to a damaged world is answered: the world and what to do, not where the file is.
    static func damage(of world: StoreWorld) -> ShareError {
        ShareError(
            .internalError,
            "the world \(world) cannot be opened: its file (\(world.container)/\(world.environment.rawValue).sqlite in "
                + "the store's worlds folder) is damaged or unreadable; move it aside to start the world empty",
            subject: world.description)
    }

    /// The worlds of a file store, read from disk once.
    private func knownWorlds(_ pool: inout Pool) -> Set<StoreWorld> {
        if let known = pool.known { return known }
        var found = scannedWorlds()
        if let homeWorld = pool.home?.world { found.insert(homeWorld) }
        pool.known = found
        return found
    }

    /// Records `world` as the world the home file holds, unless another process did first; answers the
    /// world the file holds.
    private func claim(_ writer: any DatabaseWriter, for world: StoreWorld, _ pool: inout Pool) throws -> StoreWorld {
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
        pool.known?.insert(claimed)
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
        let found = pool.withLock { pool -> Set<StoreWorld> in
            var found = Set(pool.writers.keys)
            if let homeWorld = pool.home?.world { found.insert(homeWorld) }
            guard path != nil else { return found }
            let scanned = scannedWorlds()
            pool.known = scanned.union(found)
            return found.union(scanned)
        }
        return found.sorted {
            ($0.container, $0.environment == .development ? 0 : 1)
                < ($1.container, $1.environment == .development ? 0 : 1)
        }
    }

    /// The worlds whose files are in `PATH.worlds`, without opening any. A folder whose name is no container
    /// identifier (`.git`, made by hand or by an older sharelane) is not a world.
    private func scannedWorlds() -> Set<StoreWorld> {
        guard let path else { return [] }
        let folder = URL(fileURLWithPath: Self.worldsFolder(of: path))
        let containers = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        var found: Set<StoreWorld> = []
        for encoded in containers {
            guard let container = encoded.removingPercentEncoding, StoreWorld.containerProblem(container) == nil
            else { continue }
            for environment in CloudKitEnvironment.allCases {
                let file = folder.appendingPathComponent(encoded).appendingPathComponent(
                    "\(environment.rawValue).sqlite")
                if FileManager.default.fileExists(atPath: file.path) {
                    found.insert(StoreWorld(container: container, environment: environment))
                }
            }
        }
        return found
    }

    // MARK: - Files

    /// Where the worlds other than the home file's are kept: `PATH.worlds`.
    public static func worldsFolder(of path: String) -> String { path + ".worlds" }

    /// `PATH.worlds/CONTAINER/ENVIRONMENT.sqlite`. A container identifier (`StoreWorld.containerProblem`) is
    /// letters, digits, `.` and `-` alone, a name of its own for a folder.
    static func worldFile(of path: String, _ world: StoreWorld) -> String {
        worldsFolder(of: path) + "/\(world.container)/\(world.environment.rawValue).sqlite"
    }

    /// Makes `directory` and the folders above it that are missing, each readable by this user only (0700):
    /// a store holds every user's data and the assets they saved.
    static func makePrivateDirectory(_ directory: URL) throws {
        var missing: [URL] = []
        var folder = directory.standardizedFileURL
        while !FileManager.default.fileExists(atPath: folder.path), folder.path != "/" {
            missing.append(folder)
            folder = folder.deletingLastPathComponent()
        }
        for folder in missing.reversed() where mkdir(folder.path, 0o700) != 0 && errno != EEXIST {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: folder.path])
        }
    }

    /// Creates an empty file readable by this user only (0600), unless it exists: SQLite would make a new
    /// database readable by everyone (0644) and its write-ahead log and shared memory after it.
    static func createPrivateFile(_ path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            close(descriptor)
        } else if errno != EEXIST {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
    }

    /// Runs `body` with a new folder of its own in the temporary directory, readable by this user only
    /// (`mkdtemp` makes it 0700), removed afterwards: snapshots pass through it on their way in and out.
    static func withPrivateFolder<T>(_ body: (URL) throws -> T) throws -> T {
        var template = Array(
            FileManager.default.temporaryDirectory.appendingPathComponent("sharelane-snapshot-XXXXXX").path.utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
        guard let made else { throw ShareError(.internalError, "cannot make a temporary folder for a snapshot") }
        let folder = URL(fileURLWithPath: made)
        defer { try? FileManager.default.removeItem(at: folder) }
        return try body(folder)
    }

    static func openFile(_ path: String, displayName: String) throws -> any DatabaseWriter {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent()
        do {
            try makePrivateDirectory(directory)
            try createPrivateFile(path)
        } catch {
            throw ShareError(
                .internalError,
                "cannot create the store file \(path) or its directory: \(error.localizedDescription)",
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
