import CloudKitWire
import Crypto
import Foundation
import ShareKit
import SharelaneTestSupport
import SharelaneTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking  // URLSession on Linux
#endif

/// `SharelaneTesting` as a Swift server developer's suite uses it: a seeding failure says where and what, as
/// the command line does; an emulator configured as `serve`'s options would; worlds of each test's own on
/// one emulator; and `stop()` giving back what the emulator took.
@Suite struct SharelaneTestingWorldTests {
    typealias H = EmulatorHarness

    static let recipe = """
        sharelane: 1
        name: trips
        container: iCloud.com.example.Trips
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
        owner: alice
        zones:
          Trips:
            records:
              italy: { type: Trip, fields: { name: Italy } }
        lanes:
          setup:
            steps:
              - apply
              - expect: { as: alice, records: 5, zone: Trips }
          fine:
            steps:
              - apply
        """

    /// A request to `emulator`'s `database` of `container` as the user of `token` (none: the API token alone).
    static func request(
        _ emulator: SharelaneEmulator, container: String? = nil, _ database: String, _ operation: String,
        token: String? = nil, body: String = "{}", headers: [(name: String, value: String)] = []
    ) async throws -> H.Answer {
        var query = ["ckAPIToken": emulator.apiToken]
        if let token { query["ckWebAuthToken"] = token }
        let path =
            "/database/1/\(container ?? emulator.container)/\(emulator.environment.rawValue)/\(database)/\(operation)"
        return try await H.raw(
            emulator.baseURL, path, query: headers.isEmpty ? query : [:], body: body, headers: headers)
    }

    /// The record names in alice's zone `Trips` of `container`.
    static func trips(_ emulator: SharelaneEmulator, container: String? = nil, token: String) async throws -> [String] {
        let answer = try await request(
            emulator, container: container, "private", "records/query", token: token,
            body: #"{"zoneID":{"zoneName":"Trips"},"query":{"recordType":"Trip"}}"#)
        #expect(answer.status == 200, "\(answer.text)")
        let records = answer.json["records"] as? [[String: Any]] ?? []
        return records.compactMap { $0["recordName"] as? String }.sorted()
    }

    static func save(
        _ emulator: SharelaneEmulator, container: String? = nil, _ name: String, token: String
    ) async throws {
        let answer = try await request(
            emulator, container: container, "private", "records/modify", token: token,
            body: #"{"zoneID":{"zoneName":"Trips"},"operations":[{"operationType":"create","record":"#
                + #"{"recordName":"\#(name)","recordType":"Trip","fields":{"name":{"value":"\#(name)"}}}}]}"#)
        #expect(answer.status == 200, "\(answer.text)")
    }

    @Test("a lane that fails while seeding says where, which step, and expected against found")
    func seedingFailureSaysWhereAndWhat() async throws {
        let error = await #expect(throws: FixtureSeeder.Failure.self) {
            let emulator = try await SharelaneEmulator.start(
                recipeYAML: Self.recipe, file: "Recipes/trips.yaml", lanes: ["setup"])
            await emulator.stop()
        }
        let text = String(describing: try #require(error))
        #expect(text.contains("lane setup of Recipes/trips.yaml failed"), "\(text)")
        #expect(text.contains("Recipes/trips.yaml:16:"), "\(text)")
        #expect(text.contains(": error: expectation failed: expected 5 records"), "\(text)")
        #expect(text.contains("found 1"), "\(text)")
        #expect(text.contains("at step `expect"), "\(text)")
        #expect(error?.lane == "setup")
        #expect(error?.laneError != nil)
    }

    @Test("a configured emulator takes a server key's public write, refuses a wrong key, and plays faults")
    func configuredAsServe() async throws {
        let key = P256.Signing.PrivateKey()
        var configuration = SharelaneEmulator.Configuration(strictTokens: true)
        try configuration.addServerKey(id: "test-key", pem: key.publicKey.pemRepresentation)
        let emulator = try await SharelaneEmulator.start(
            recipeYAML: Self.recipe, lanes: ["fine"], configuration: configuration)
        defer { Task { await emulator.stop() } }

        let path = "/database/1/\(emulator.container)/development/public/records/modify"
        let body =
            #"{"operations":[{"operationType":"create","record":{"recordName":"card","recordType":"Card","#
            + #""fields":{"title":{"value":"from the server"}}}}]}"#
        let signer = try RequestSigner(keyID: "test-key", pem: key.pemRepresentation)
        var answer = try await H.raw(
            emulator.baseURL, path, body: body,
            headers: try signer.headers(date: Date(), body: Data(body.utf8), subpath: path))
        #expect(answer.status == 200, "\(answer.text)")
        #expect((answer.json["records"] as? [[String: Any]])?.first?["recordName"] as? String == "card")

        let impostor = try RequestSigner(keyID: "test-key", pem: P256.Signing.PrivateKey().pemRepresentation)
        answer = try await H.raw(
            emulator.baseURL, path, body: body,
            headers: try impostor.headers(date: Date(), body: Data(body.utf8), subpath: path))
        #expect(answer.status == 401, "\(answer.text)")

        // --strict-tokens: a web auth token serves one request.
        let token = try await emulator.webAuthToken(for: "alice")
        _ = try await Self.request(emulator, "private", "zones/list", token: token)
        answer = try await Self.request(emulator, "private", "zones/list", token: token)
        #expect(answer.status == 421, "\(answer.text)")

        // The default configuration takes neither: the signed write is refused.
        let plain = try await SharelaneEmulator.start(recipeYAML: Self.recipe, lanes: ["fine"])
        defer { Task { await plain.stop() } }
        answer = try await H.raw(
            plain.baseURL, path, body: body,
            headers: try signer.headers(date: Date(), body: Data(body.utf8), subpath: path))
        #expect(answer.status == 401, "\(answer.text)")
    }

    @Test("faults with a seed: every request meets the fault the configuration names")
    func configuredFaults() async throws {
        var configuration = SharelaneEmulator.Configuration()
        configuration.network = try NetworkConditions(
            latency: nil, throttle: nil, faults: "unavailable=100%", seed: "7")
        let emulator = try await SharelaneEmulator.startEmpty(configuration: configuration)
        defer { Task { await emulator.stop() } }
        let answer = try await Self.request(emulator, "public", "records/query", body: #"{"query":{"recordType":"T"}}"#)
        #expect(answer.status == 503, "\(answer.text)")
        #expect(answer.json["serverErrorCode"] as? String == "TRY_AGAIN_LATER")
    }

    @Test("tests in worlds of their own on one emulator never see, reset or restore each other's data")
    func worldsOfTheirOwn() async throws {
        let emulator = try await SharelaneEmulator.start(recipeYAML: Self.recipe, lanes: ["fine"])
        defer { Task { await emulator.stop() } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<4 {
                group.addTask {
                    let world = try await emulator.world()
                    #expect(world.container.hasPrefix("iCloud.com.example.Trips.world-"))
                    #expect(world.users.map(\.handle).sorted() == ["alice", "bob"])
                    #expect(world.userRecordName(for: "bob") == emulator.userRecordName(for: "bob"))
                    let alice = try world.webAuthToken(for: "alice")
                    #expect(try await Self.trips(emulator, container: world.container, token: alice) == ["italy"])
                    try await Self.save(emulator, container: world.container, "mine-\(index)", token: alice)
                    try await world.snapshot("saved")
                    try await Self.save(emulator, container: world.container, "later-\(index)", token: alice)
                    #expect(
                        try await Self.trips(emulator, container: world.container, token: alice)
                            == ["italy", "later-\(index)", "mine-\(index)"])
                    try await world.restore("saved")
                    #expect(
                        try await Self.trips(emulator, container: world.container, token: alice)
                            == ["italy", "mine-\(index)"])
                    try await world.reset()
                    #expect(try await Self.trips(emulator, container: world.container, token: alice) == ["italy"])
                    try await world.remove()
                }
            }
            try await group.waitForAll()
        }
        // The seeded container was never touched by the worlds' resets.
        let alice = try await emulator.webAuthToken(for: "alice")
        try await Self.save(emulator, "seeded-only", token: alice)
        let world = try await emulator.world()
        try await world.reset(toEmpty: true)
        #expect(try await Self.trips(emulator, token: alice) == ["italy", "seeded-only"])
        // A reset of one named container leaves the seeded one alone; the seeded one's own reset takes it back.
        try await emulator.reset(container: world.container)
        #expect(try await Self.trips(emulator, token: alice) == ["italy", "seeded-only"])
        try await emulator.reset()
        #expect(try await Self.trips(emulator, token: alice) == ["italy"])
    }

    @Test("a world's container must be a container identifier that holds nothing yet")
    func worldNames() async throws {
        let emulator = try await SharelaneEmulator.start(recipeYAML: Self.recipe, lanes: ["fine"])
        defer { Task { await emulator.stop() } }
        let error = await #expect(throws: ShareError.self) { _ = try await emulator.world(container: "trips") }
        #expect(error?.code == .badRequest)
        let taken = await #expect(throws: ShareError.self) {
            _ = try await emulator.world(container: emulator.container)
        }
        #expect(taken?.reason.contains("holds data already") == true)
    }

    @Test("stop() stops listening and gives back the emulator's worlds")
    func stopGivesBack() async throws {
        let emulator = try await SharelaneEmulator.start(recipeYAML: Self.recipe, lanes: ["fine"])
        _ = try await emulator.world()
        let before = try JSONSerialization.jsonObject(with: try await emulator.exportSnapshot()) as? [String: Any]
        #expect((before?["worlds"] as? [Any])?.count == 2)
        await emulator.stop()
        // Nothing listens on its port any more: the connection is refused.
        let url = try #require(URL(string: "\(emulator.baseURL)/_sharelane/users?ckAPIToken=\(emulator.apiToken)"))
        await #expect(throws: (any Error).self) { _ = try await URLSession.shared.data(from: url) }
        let after = try JSONSerialization.jsonObject(with: try await emulator.exportSnapshot()) as? [String: Any]
        #expect((after?["worlds"] as? [Any])?.isEmpty == true)
        await emulator.stop()  // again: nothing to do
    }

    @Test("changes/database in the public database is refused as Apple refuses it")
    func publicDatabaseChanges() async throws {
        let emulator = try await SharelaneEmulator.start(recipeYAML: Self.recipe, lanes: ["fine"])
        defer { Task { await emulator.stop() } }
        let alice = try await emulator.webAuthToken(for: "alice")
        var answer = try await Self.request(emulator, "public", "changes/database", token: alice)
        #expect(answer.status == 400, "\(answer.text)")
        #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST")
        #expect((answer.json["reason"] as? String)?.contains("private and shared") == true, "\(answer.text)")
        answer = try await Self.request(emulator, "private", "changes/database", token: alice)
        #expect(answer.status == 200, "\(answer.text)")
    }

    @Test("Docs/Testing.md's worked server test is TripServiceExampleTests.swift, which the suite runs")
    func serverExample() throws {
        let file = try String(
            contentsOf: BuiltProducts.packageRoot.appendingPathComponent(
                "Tests/EmulatorTests/TripServiceExampleTests.swift"),
            encoding: .utf8)
        #expect(try TestingDocTests.example("swift-server-example", fence: "swift") == file)
    }
}
