import Foundation
import GRDB
import Logging
import ShareKit
import SharelaneTestSupport
import Testing

@testable import ShareStoreSQLite

/// A store's worlds are bounded and well named: a flood of containers cannot exhaust the process's files, a
/// world file damaged by hand costs that world only, and what the store writes is readable by its owner only.
@Suite struct WorldLimitsTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    static func world(_ number: Int) -> StoreWorld {
        StoreWorld(container: "iCloud.com.example.app\(number)", environment: .development)
    }

    static func mode(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func containerIdentifiersAreCloudKitsOwnShape() {
        for good in ["iCloud.a", "iCloud.com.example.Lists", "iCloud.com.my-company.App2", "iCloud.local.sharelane"] {
            #expect(StoreWorld.containerProblem(good) == nil, "\(good)")
        }
        for bad in [
            "", ".git", "-rf", "....", "..", ".", "iCloud.", "iCloud..x", "iCloud.x.", "iCloud.a_b", "icloud.a",
            "iCloud.a/b", "iCloud.a b", "iCloud.é", "com.example.App", String(repeating: "a", count: 300),
        ] {
            #expect(StoreWorld.containerProblem(bad) != nil, "\(bad)")
        }
    }

    @Test func badNamesAreRefusedAndMakeNoFolder() async throws {
        let scratch = try TemporaryDirectory("worlds")
        let path = scratch.file("store.sqlite")
        let worlds = try SQLiteWorlds(path: path, logger: logger)
        for bad in [".git", "-rf", "....", "iCloud.", "iCloud..x", ".."] {
            let error = #expect(throws: ShareError.self) {
                _ = try worlds.store(for: StoreWorld(container: bad, environment: .development))
            }
            #expect(error?.code == .badRequest)
        }
        #expect(!FileManager.default.fileExists(atPath: SQLiteWorlds.worldsFolder(of: path)))
        #expect(try worlds.worlds().isEmpty)
    }

    @Test func openWorldsAreBoundedAndAStorePastItsLimitRefusesNewOnes() async throws {
        let scratch = try TemporaryDirectory("worlds")
        let path = scratch.file("store.sqlite")
        let limits = SQLiteWorlds.Limits(worlds: 12, openWorlds: 3)
        let worlds = try SQLiteWorlds(path: path, limits: limits, logger: logger)
        for number in 0..<12 {
            let store = try worlds.sqliteStore(for: Self.world(number))
            _ = try await store.signIn(email: "user\(number)@example.com", name: nil)
            #expect(worlds.openWorldCount <= 3)
        }
        let error = #expect(throws: ShareError.self) { _ = try worlds.store(for: Self.world(12)) }
        #expect(error?.code == .quotaExceeded)
        #expect(error?.reason.contains("12") == true, "\(error?.reason ?? "")")
        #expect(!FileManager.default.fileExists(atPath: SQLiteWorlds.worldFile(of: path, Self.world(12))))
        // A world closed to make room is opened again, as it was.
        let first = try worlds.sqliteStore(for: Self.world(1))
        #expect(try await first.allUsers().map(\.email) == ["user1@example.com"])
        // The store opens again, listing its worlds without opening any, and still refuses a new one.
        let again = try SQLiteWorlds(path: path, limits: limits, logger: logger)
        #expect(try again.worlds().count == 12)
        #expect(again.openWorldCount == 0)
        #expect(throws: ShareError.self) { _ = try again.store(for: Self.world(13)) }
    }

    @Test func aDamagedWorldFileCostsThatWorldOnly() async throws {
        let scratch = try TemporaryDirectory("worlds")
        let path = scratch.file("store.sqlite")
        do {
            let worlds = try SQLiteWorlds(path: path, logger: logger)
            _ = try await worlds.sqliteStore(for: Self.world(1)).signIn(email: "a@example.com", name: nil)
            _ = try await worlds.sqliteStore(for: Self.world(2)).signIn(email: "b@example.com", name: nil)
        }
        let broken = SQLiteWorlds.worldFile(of: path, Self.world(2))
        let empty = SQLiteWorlds.worldFile(of: path, Self.world(3))
        try FileManager.default.createDirectory(
            atPath: URL(fileURLWithPath: empty).deletingLastPathComponent().path, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: empty, contents: Data())
        let reopened = try SQLiteWorlds(path: path, logger: logger)
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: broken))
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: broken + suffix) }
        let error = #expect(throws: ShareError.self) {
            _ = try reopened.sqliteStore(for: Self.world(2))
        }
        #expect(error?.code == .internalError)
        #expect(error?.reason.contains(Self.world(2).description) == true, "\(error?.reason ?? "")")
        #expect(error?.reason.contains(scratch.path) == false)
        #expect(try await reopened.sqliteStore(for: Self.world(1)).allUsers().count == 1)
        #expect(try await reopened.sqliteStore(for: Self.world(3)).allUsers().isEmpty)
        // Moved aside, as the answer says, the file's bytes are kept and the world starts empty at once.
        try FileManager.default.moveItem(atPath: broken, toPath: broken + ".damaged")
        #expect(try await reopened.sqliteStore(for: Self.world(2)).allUsers().isEmpty)
    }

    @Test func filesAndFoldersTheStoreMakesAreItsOwnersOnly() async throws {
        let scratch = try TemporaryDirectory("worlds")
        let path = scratch.file("project/.sharelane/store.sqlite")
        let worlds = try SQLiteWorlds(path: path, logger: logger)
        let store = try worlds.sqliteStore(for: Self.world(1))
        _ = try await store.signIn(email: "a@example.com", name: nil)
        let other = try worlds.sqliteStore(for: Self.world(2))
        _ = try await other.signIn(email: "b@example.com", name: nil)
        let file = SQLiteWorlds.worldFile(of: path, Self.world(2))
        #expect(try Self.mode(scratch.file("project")) == 0o700)
        #expect(try Self.mode(scratch.file("project/.sharelane")) == 0o700)
        #expect(try Self.mode(path) == 0o600)
        #expect(try Self.mode(SQLiteWorlds.worldsFolder(of: path)) == 0o700)
        #expect(try Self.mode(URL(fileURLWithPath: file).deletingLastPathComponent().path) == 0o700)
        #expect(try Self.mode(file) == 0o600)
        #expect(try Self.mode(file + "-wal") == 0o600)
        let folderMode = try SQLiteWorlds.withPrivateFolder { folder in try Self.mode(folder.path) }
        #expect(folderMode == 0o700)
        // A snapshot on its way out and in passes through such a folder only.
        let bytes = try await worlds.snapshot(Self.world(2)).serialized()
        _ = try worlds.snapshot(serialized: bytes)
    }

    /// A world's database with a trigger of someone else's added.
    static func withTrigger(_ bytes: Data) throws -> Data {
        let scratch = try TemporaryDirectory("trigger")
        let file = scratch.url.appendingPathComponent("world.sqlite")
        try bytes.write(to: file)
        let queue = try DatabaseQueue(path: file.path)
        try queue.write { db in
            try db.execute(sql: "CREATE TRIGGER audit AFTER UPDATE ON counter BEGIN DELETE FROM user; END")
        }
        try queue.close()
        return try Data(contentsOf: file)
    }

    @Test func aSnapshotWithATriggerOrAViewIsRefusedBeforeAnythingIsWritten() async throws {
        let scratch = try TemporaryDirectory("worlds")
        let worlds = try SQLiteWorlds(path: scratch.file("store.sqlite"), logger: logger)
        let store = try worlds.sqliteStore(for: Self.world(1))
        _ = try await store.signIn(email: "a@example.com", name: nil)
        let good = try await worlds.snapshot(Self.world(1)).serialized()
        let error = #expect(throws: ShareError.self) {
            _ = try worlds.snapshot(serialized: try Self.withTrigger(good))
        }
        #expect(error?.code == .badRequest)
        #expect(error?.reason.contains("trigger \"audit\"") == true, "\(error?.reason ?? "")")
        #expect(throws: ShareError.self) { _ = try worlds.snapshot(serialized: Data("not a database".utf8)) }
        // An older snapshot (every migration but the last) is brought up to date.
        let older = try DatabaseQueue()
        let migrator = StoreMigrations.migrator
        try migrator.migrate(older, upTo: migrator.migrations[migrator.migrations.count - 2])
        let olderBytes = try Snapshot(older).serialized()
        let brought = try worlds.snapshot(serialized: olderBytes)
        try await worlds.restore([(Self.world(5), brought)])
        #expect(try await worlds.sqliteStore(for: Self.world(5)).allUsers().isEmpty)
        #expect(try await store.allUsers().count == 1)
    }
}

extension WorldLimitsTests {
    typealias Snapshot = SQLiteWorlds.Snapshot
}
