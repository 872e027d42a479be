import Foundation
import Synchronization
import GRDB
import Logging
import ShareKit

// MARK: - Snapshots

extension SQLiteWorlds {
    /// A world copied into a database in memory with SQLite's backup API: a page-for-page copy, taken in one
    /// read transaction.
    final class Snapshot: WorldSnapshot, Sendable {
        let copy: DatabaseQueue
        let byteCount: Int
        /// Whether `WorldFileCheck` found the copy sound: it never changes, so it is checked once.
        private let sound = Mutex(false)

        init(_ copy: DatabaseQueue) throws {
            self.copy = copy
            byteCount = try copy.read { db in
                let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
                return pages * (try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096)
            }
        }

        /// What is wrong with the copy as a world's database, or nil.
        func problem() throws -> String? {
            if sound.withLock({ $0 }) { return nil }
            let problem = try copy.read(WorldFileCheck.problem)
            if problem == nil { sound.withLock { $0 = true } }
            return problem
        }

        func serialized() throws -> Data {
            try SQLiteWorlds.withPrivateFolder { folder in
                let file = folder.appendingPathComponent("world.sqlite")
                do {
                    try SQLiteWorlds.createPrivateFile(file.path)
                    let target = try DatabaseQueue(path: file.path)
                    try copy.backup(to: target)
                    try target.close()
                } catch {
                    throw ShareError(.internalError, "cannot write a snapshot: \(error)")
                }
                return try Data(contentsOf: file)
            }
        }
    }

    public func snapshot(_ world: StoreWorld) async throws -> any WorldSnapshot {
        let writer = try writer(for: world)
        return try Self.guarded(displayName) {
            let copy = try DatabaseQueue()
            try writer.backup(to: copy)
            return try Snapshot(copy)
        }
    }

    public func check(_ snapshot: any WorldSnapshot) throws {
        guard let snapshot = snapshot as? Snapshot else {
            throw ShareError(.badRequest, "this snapshot is not of a SQLite store; take it from this store")
        }
        let problem: String?
        do {
            problem = try snapshot.problem()
        } catch {
            throw ShareError(.badRequest, "the snapshot cannot be read as a sharelane store: \(error)")
        }
        if let problem { throw ShareError(.badRequest, "the snapshot is not sharelane's own store: \(problem)") }
    }

    public func restore(_ world: StoreWorld, to snapshot: any WorldSnapshot) async throws {
        try check(snapshot)
        guard let snapshot = snapshot as? Snapshot else { return }
        let writer = try writer(for: world)
        try Self.guarded(displayName) {
            // Staged apart, so that the world's file takes it in one backup: its own record of the world it
            // holds kept, and a new epoch, so that change tokens handed out since the snapshot are refused.
            let staged = try DatabaseQueue()
            try Self.stage(snapshot, recording: try Self.recordedWorld(writer, displayName: displayName), in: staged)
            try staged.backup(to: writer)
        }
        logger.info("restored a snapshot", metadata: ["world": "\(world)", "store": "\(displayName)"])
    }

    /// Copies `snapshot` into `database`, recording `world` as the world it holds (a home file's), or none,
    /// with a new epoch.
    static func stage(_ snapshot: Snapshot, recording world: StoreWorld?, in database: DatabaseQueue) throws {
        try snapshot.copy.backup(to: database)
        try database.write { db in
            try db.execute(sql: "DELETE FROM storeWorld")
            if let world {
                try db.execute(
                    sql: "INSERT INTO storeWorld (id, container, environment) VALUES (1, ?, ?)",
                    arguments: [world.container, world.environment.rawValue])
            }
            try db.execute(sql: "UPDATE counter SET epoch = ?", arguments: [ChangeSequence.newEpoch()])
        }
    }

    public func restore(_ snapshots: [(world: StoreWorld, snapshot: any WorldSnapshot)]) async throws {
        // Everything is checked before anything is written: each world's name, its snapshot, and that the
        // worlds new to this store fit in its limit.
        var seen: Set<StoreWorld> = []
        for (world, snapshot) in snapshots {
            if let problem = StoreWorld.containerProblem(world.container) {
                throw ShareError(.badRequest, "\(world): \(problem)", subject: world.description)
            }
            guard seen.insert(world).inserted else {
                throw ShareError(.badRequest, "\(world) is given twice", subject: world.description)
            }
            do {
                try check(snapshot)
            } catch let error as ShareError {
                throw ShareError(error.code, "\(world): \(error.reason)", subject: world.description)
            }
        }
        let existing = Set(try worlds())
        let added = seen.subtracting(existing)
        if existing.count + added.count > limits.worlds {
            throw ShareError(
                .quotaExceeded,
                "these worlds would make \(existing.count + added.count) containers and environments in this store, "
                    + "over its limit of \(limits.worlds)")
        }
        let checked = snapshots.compactMap { entry in (entry.snapshot as? Snapshot).map { (entry.world, $0) } }
        guard let path else {
            // In memory, each world takes its snapshot in one backup between databases in memory, which
            // cannot fail for want of a disk.
            for (world, snapshot) in checked { try await restore(world, to: snapshot) }
            return
        }
        try pool.withLock { pool in try replaceFiles(checked, path: path, &pool) }
        logger.info(
            "put worlds in place", metadata: ["worlds": "\(snapshots.map(\.world))", "store": "\(displayName)"])
    }

    /// Writes each world to a temporary file beside its own, then, once all are written, moves them into
    /// place: a failure before the moves leaves every file as it was.
    private func replaceFiles(_ snapshots: [(StoreWorld, Snapshot)], path: String, _ pool: inout Pool) throws {
        guard let home = pool.home else { return }
        // A home file that holds no world yet takes the first, as opening it would.
        let homeWorld = home.world ?? snapshots.first?.0
        var staged: [(world: StoreWorld, file: String, temporary: String)] = []
        var madeFolders: [URL] = []
        var closedHome = false
        do {
            for (world, snapshot) in snapshots {
                let file = world == homeWorld ? path : Self.worldFile(of: path, world)
                let folder = URL(fileURLWithPath: file).deletingLastPathComponent()
                var above = folder
                while !FileManager.default.fileExists(atPath: above.path) {
                    madeFolders.append(above)
                    above = above.deletingLastPathComponent()
                }
                try Self.makePrivateDirectory(folder)
                let temporary = file + ".importing-\(UUID().uuidString)"
                try Self.createPrivateFile(temporary)
                staged.append((world, file, temporary))
                let database = try DatabaseQueue(path: temporary)
                try Self.stage(snapshot, recording: world == homeWorld ? world : nil, in: database)
                try database.close()
            }
            // The open databases of those worlds are closed before their files are replaced: an open one
            // would go on writing to the file moved away, and its write-ahead log, kept by name, would be
            // read into the new one.
            for entry in staged {
                if entry.world == homeWorld {
                    closedHome = true
                    try home.writer?.close()
                } else {
                    try pool.writers[entry.world]?.close()
                }
                pool.letGo(of: entry.world)
            }
        } catch {
            for entry in staged { try? FileManager.default.removeItem(atPath: entry.temporary) }
            for folder in madeFolders { try? FileManager.default.removeItem(at: folder) }
            // Opened again when next needed.
            if closedHome { pool.home = (nil, home.world) }
            throw ShareError(.internalError, "cannot write the worlds to the store, which is unchanged: \(error)")
        }
        for entry in staged {
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: entry.file + suffix) }
            if rename(entry.temporary, entry.file) != 0 {
                throw ShareError(
                    .internalError,
                    "cannot move \(entry.world) into place in \(displayName): \(String(cString: strerror(errno)))")
            }
            pool.known?.insert(entry.world)
        }
        // The home file holds the world staged for it (its table `storeWorld` says so), opened when needed.
        if staged.contains(where: { $0.world == homeWorld }) { pool.home = (nil, homeWorld) }
    }

    public func snapshot(serialized data: Data) throws -> any WorldSnapshot {
        try Self.withPrivateFolder { folder in
            let file = folder.appendingPathComponent("world.sqlite")
            do {
                try Self.createPrivateFile(file.path)
                try Self.standalone(data).write(to: file)
            } catch {
                throw ShareError(
                    .internalError, "cannot write a snapshot to a temporary file: \(error.localizedDescription)")
            }
            let snapshot: Snapshot
            do {
                // Read-only: nothing in the file runs or changes before it is checked.
                var configuration = Configuration()
                configuration.readonly = true
                let source = try DatabaseQueue(path: file.path, configuration: configuration)
                defer { try? source.close() }
                if let problem = try source.read(WorldFileCheck.problem) {
                    throw ShareError(.badRequest, "the database is not sharelane's own store: \(problem)")
                }
                let copy = try DatabaseQueue()
                try source.backup(to: copy)
                // A snapshot of an older sharelane is brought up to this one's tables.
                try Self.migrate(copy, displayName: displayName)
                snapshot = try Snapshot(copy)
            } catch let error as ShareError {
                throw ShareError(.badRequest, error.reason)
            } catch {
                throw ShareError(.badRequest, "the database is not a SQLite database of a sharelane store: \(error)")
            }
            return snapshot
        }
    }

    /// The bytes of a database file as a file of its own: a copy of a database in WAL mode says so in its
    /// header (bytes 18 and 19 are 2), and SQLite opens such a file read-only only beside its write-ahead log
    /// and shared memory, which a copy has not; 1 and 1 mark the same pages as a rollback-journal database.
    static func standalone(_ data: Data) -> Data {
        guard data.count >= 100, data.prefix(16) == Data("SQLite format 3\0".utf8) else { return data }
        var data = data
        let start = data.startIndex
        if data[start + 18] == 2 && data[start + 19] == 2 {
            data[start + 18] = 1
            data[start + 19] = 1
        }
        return data
    }
}
