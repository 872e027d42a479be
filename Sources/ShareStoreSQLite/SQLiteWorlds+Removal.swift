import Foundation
import GRDB
import Logging
import ShareKit

// MARK: - Emptying and removing

extension SQLiteWorlds {

    public func empty(_ world: StoreWorld) async throws {
        // SQLite keeps a deleted row's pages for the rows to come, so only a new database gives back what a
        // world in memory held; one named again is made empty, as this one would be.
        guard path != nil else {
            _ = try await remove(world)
            return
        }
        try await sqliteStore(for: world).reset()
    }

    public func remove(_ world: StoreWorld) async throws -> Bool {
        if let problem = StoreWorld.containerProblem(world.container) {
            throw ShareError(.badRequest, problem, subject: world.container)
        }
        guard let path else {
            return pool.withLock { pool in
                pool.lastUse[world] = nil
                return pool.writers.removeValue(forKey: world) != nil
            }
        }
        if homeWorld == world {
            try await release(home: world)
            return true
        }
        return try pool.withLock { pool in try removeFile(of: world, path: path, &pool) }
    }

    /// The store file is the store, so the world it holds is emptied and the file left holding none: it no
    /// longer counts as a world, and the next new world claims it, as a new file's.
    private func release(home world: StoreWorld) async throws {
        let writer = try pool.withLock { pool in try homeWriter(&pool) }
        try await SQLiteStore(writer: writer, world: world, worlds: self).reset()
        try Self.guarded(displayName) {
            try writer.write { db in try db.execute(sql: "DELETE FROM storeWorld") }
        }
        pool.withLock { pool in
            pool.home = (writer, nil)
            pool.letGo(of: world)
            pool.known?.remove(world)
        }
    }

    /// Closes a world's database and removes its file, its write-ahead log and shared memory first: a log
    /// left behind would be read into the next file of that name.
    private func removeFile(of world: StoreWorld, path: String, _ pool: inout Pool) throws -> Bool {
        let file = Self.worldFile(of: path, world)
        guard FileManager.default.fileExists(atPath: file) else {
            pool.known?.remove(world)
            return false
        }
        if let writer = pool.writers[world] {
            do {
                try writer.close()
            } catch {
                throw ShareError(
                    .internalError, "cannot close \(world) to remove it, which is unchanged: \(error)",
                    subject: world.description)
            }
        }
        pool.letGo(of: world)
        pool.damaged[world] = nil
        do {
            for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: file + suffix) {
                try FileManager.default.removeItem(atPath: file + suffix)
            }
            try FileManager.default.removeItem(atPath: file)
        } catch {
            // As a damaged world's: the answer names the world, whoever runs the store is told the path.
            logger.warning("cannot remove the file of \(world), \(file): \(error.localizedDescription)")
            throw ShareError(
                .internalError,
                "cannot remove the file of \(world) (\(world.container)/\(world.environment.rawValue).sqlite in the "
                    + "store's worlds folder): check that folder's permissions",
                subject: world.description)
        }
        pool.known?.remove(world)
        // The container's folder goes with its last world; rmdir leaves a folder that holds anything.
        rmdir(URL(fileURLWithPath: file).deletingLastPathComponent().path)
        logger.info("removed a world", metadata: ["world": "\(world)", "store": "\(displayName)"])
        return true
    }
}
