import Foundation
import SharelaneTestSupport
import Lanes
import Logging
import Recipe
import ShareKit
import ShareStoreSQLite

/// A recipe file and a SQLite store file in a fresh temporary directory, and a runner over them that
/// writes its lines into a string the test reads.
struct LaneHarness {
    let scratch: TemporaryDirectory
    var directory: URL { scratch.url }
    let recipePath: String
    let store: SQLiteStore
    let lines = StreamBox("")

    init(recipe text: String) throws {
        scratch = try TemporaryDirectory("lanes")
        recipePath = scratch.file("recipe.yaml")
        try text.write(toFile: recipePath, atomically: true, encoding: .utf8)
        store = try SQLiteStore(
            path: scratch.file("store.sqlite"), logger: Logger(label: "sharelane.tests.store"))
    }

    /// Everything the runner printed.
    var output: String { lines.value }

    func recipe(overrides: [String: String] = [:]) throws -> Recipe {
        try RecipeLoader(environment: [:], overrides: overrides).load(path: recipePath)
    }

    func runner(overrides: [String: String] = [:]) -> LaneRunner {
        let path = recipePath
        return LaneRunner(
            store: store, output: .stream(lines), logger: Logger(label: "sharelane.tests.lanes"),
            reload: { overrides in try RecipeLoader(environment: [:], overrides: overrides).load(path: path) },
            overrides: overrides)
    }

    /// Runs a lane as the command line does.
    func run(_ lane: String, overrides: [String: String] = [:]) async throws -> LaneReport {
        try await runner(overrides: overrides).run(lane: lane, of: recipe(overrides: overrides))
    }

    /// The user with this email, signed in.
    func user(_ email: String) async throws -> User {
        try await store.signIn(email: email, name: nil)
    }

    /// Creates a zone in the private database of the user with this email.
    func createZone(_ name: String, ownerEmail: String) async throws {
        let owner = try await user(ownerEmail)
        let results = try await store.modifyZones(
            [ZoneOperation(.create, ZoneID(zoneName: name))], in: .private, as: owner.recordName)
        if case .failure(let error) = results.first { throw error }
    }

    /// A record as the user with this email sees it in a database, or nil.
    func record(
        _ name: String, zone: ZoneID, database: DatabaseScope = .private, asEmail email: String
    ) async throws -> Record? {
        let reader = try await user(email)
        let outcomes = try await store.lookupRecords([name], in: zone, database: database, as: reader.recordName)
        if case .saved(let record) = outcomes.first { return record }
        return nil
    }
}
