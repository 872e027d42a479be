import Foundation
import GRDB
import Logging
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport
import Testing

/// Each container and environment is a world of its own, as on CloudKit: what one holds, no other lists.
@Suite struct StoreWorldsTests {
    let logger = Logger(label: "test")
    let worldA = StoreWorld(container: "iCloud.com.example.A", environment: .development)
    let worldB = StoreWorld(container: "iCloud.com.example.B", environment: .development)
    let zone = ZoneID(zoneName: "Trips")

    /// Alice's zone `Trips` with one record, in `store`.
    func seed(_ store: any Store) async throws -> UserRecordName {
        let alice = try await store.signIn(email: "alice@example.com", name: "Alice").recordName
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: alice)
        _ = try await store.create(
            Record(recordName: "italy", recordType: "Trip", zoneID: zone, fields: ["title": .string("Italy")]),
            in: zone, as: alice)
        return alice
    }

    func zoneNames(_ store: any Store, as user: UserRecordName) async throws -> [String] {
        try await store.listZones(in: .private, as: user).map(\.zoneID.zoneName).filter { $0 != defaultZoneName }
    }

    @Test func aZoneInOneContainerIsNotListedInAnotherNorInTheOtherEnvironment() async throws {
        let scratch = try TemporaryDirectory("worlds")
        let path = scratch.file("store.sqlite")
        let worlds = try SQLiteWorlds(path: path, logger: logger)
        let alice = try await seed(try worlds.store(for: worldA))

        #expect(try await zoneNames(try worlds.store(for: worldA), as: alice) == ["Trips"])
        let other = try worlds.store(for: worldB)
        _ = try await other.signIn(email: "alice@example.com", name: nil)
        #expect(try await zoneNames(other, as: alice) == [])
        let production = try worlds.store(for: worldA.inEnvironment(.production))
        _ = try await production.signIn(email: "alice@example.com", name: nil)
        #expect(try await zoneNames(production, as: alice) == [])
        #expect(try await production.record("italy", in: zone, as: alice) == nil)

        // The first world lives in the file itself, the others beside it; all are there when opened again.
        #expect(FileManager.default.fileExists(atPath: path + ".worlds/iCloud.com.example.B/development.sqlite"))
        #expect(FileManager.default.fileExists(atPath: path + ".worlds/iCloud.com.example.A/production.sqlite"))
        let reopened = try SQLiteWorlds(path: path, logger: logger)
        #expect(reopened.homeWorld == worldA)
        #expect(try reopened.worlds() == [worldA, worldA.inEnvironment(.production), worldB])
        #expect(try await zoneNames(try reopened.store(for: worldA), as: alice) == ["Trips"])
    }

    @Test func usersAreAWorldsOwn() async throws {
        let worlds = SQLiteWorlds(inMemoryWith: logger)
        let a = try worlds.sqliteStore(for: worldA)
        _ = try await a.signIn(email: "bob@example.com", name: "Bob")
        #expect(try await a.allUsers().map(\.email) == ["bob@example.com"])
        let b = try worlds.sqliteStore(for: worldB)
        #expect(try await b.allUsers().isEmpty)
        #expect(try await b.signInExisting(email: "bob@example.com") == nil)
    }

    @Test func productionSeesItsSchemaOnlyOnceDeployedAndNeverDevelopmentsRecords() async throws {
        let store = try SQLiteStore.inMemory(container: worldA.container, logger: logger)
        let alice = try await seed(store)
        let production = try store.inEnvironment(.production)
        #expect(try await production.schema(in: .production, as: alice).recordTypes.isEmpty)
        let deployed = try await production.deploySchema(as: alice)
        #expect(!deployed.isEmpty)
        #expect(try await production.schema(in: .production, as: alice).recordTypes["Trip"] != nil)
        // The same schema, read from development's store, names production's.
        #expect(try await store.schema(in: .production, as: alice).recordTypes["Trip"] != nil)
        _ = try await production.signIn(email: "alice@example.com", name: nil)
        #expect(try await zoneNames(production, as: alice) == [])
    }

    @Test func aFileWrittenBeforeWorldsBelongsToTheFirstContainerToOpenItWithBothSchemas() async throws {
        let scratch = try TemporaryDirectory("legacy")
        let path = scratch.file("store.sqlite")
        // A file as sharelane wrote it before containers were kept apart: its data, both environments'
        // schemas, and no world recorded.
        _ = try await seed(try SQLiteStore(path: path, container: worldB.container, logger: logger))
        let legacy = try DatabasePool(path: path)
        try await legacy.write { db in
            try db.execute(sql: "DELETE FROM storeWorld")
            let deployed = try Data.fetchOne(
                db, sql: "SELECT definition FROM recordSchema WHERE environment = 'development'")
            try db.execute(
                sql: "INSERT OR REPLACE INTO recordSchema (environment, definition) VALUES ('production', ?)",
                arguments: [deployed])
        }
        try legacy.close()
        try? FileManager.default.removeItem(atPath: path + ".worlds")

        let worlds = try SQLiteWorlds(path: path, logger: logger)
        #expect(worlds.homeWorld == nil)
        let claimed = try worlds.store(for: worldA)
        #expect(worlds.homeWorld == worldA)
        let alice = StableName.userRecordName(email: "alice@example.com")
        #expect(try await zoneNames(claimed, as: alice) == ["Trips"])
        // Its production starts from the production schema the file held, and no records.
        let production = try worlds.store(for: worldA.inEnvironment(.production))
        #expect(try await production.schema(in: .production, as: alice).recordTypes["Trip"] != nil)
        // Another container starts empty, and the file stays worldA's when opened again.
        let other = try worlds.sqliteStore(for: worldB)
        #expect(try await other.allUsers().isEmpty)
        #expect(try SQLiteWorlds(path: path, logger: logger).homeWorld == worldA)
    }

    @Test func aContainerThatCannotBeAFolderNameIsRefused() async throws {
        let scratch = try TemporaryDirectory("worlds")
        let worlds = try SQLiteWorlds(path: scratch.file("store.sqlite"), logger: logger)
        for bad in ["..", "", "a/b", "iCloud.a b"] {
            #expect(throws: ShareError.self) {
                _ = try worlds.store(for: StoreWorld(container: bad, environment: .development))
            }
        }
        #expect(try worlds.worlds().isEmpty)
    }
}
