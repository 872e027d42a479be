import Foundation
import ShareKit
import SharelaneTesting
import Testing

/// serve as a test fixture, through the `SharelaneTesting` library and over REST as a test suite in another
/// language would call it: back to the seeded state, named snapshots, the recipe's people, each world apart.
@Suite struct FixtureEndpointTests {
    typealias H = EmulatorHarness

    static let recipe = """
        sharelane: 1
        name: lists
        container: iCloud.com.example.Fixture
        owner: alice
        users:
          alice: { email: alice@example.com, name: Alice }
          bob: { email: bob@example.com, name: Bob }
        zones:
          Lists:
            share: { participants: { bob: read-write } }
            records:
              groceries: { type: List, fields: { title: Groceries } }
        """

    /// A raw Web Services call as `handle`, in the fixture's world.
    static func call(
        _ emulator: SharelaneEmulator, as handle: String, _ database: String, _ operation: String, _ body: String
    ) async throws -> H.Answer {
        let token = try await emulator.webAuthToken(for: handle)
        return try await H.raw(
            emulator.baseURL,
            "/database/1/\(emulator.container)/\(emulator.environment.rawValue)/\(database)/\(operation)",
            query: ["ckAPIToken": emulator.apiToken, "ckWebAuthToken": token], body: body)
    }

    /// The record names of alice's zone `Lists`, as she reads them.
    static func listNames(_ emulator: SharelaneEmulator) async throws -> [String] {
        let answer = try await call(
            emulator, as: "alice", "private", "records/query",
            #"{"zoneID":{"zoneName":"Lists"},"query":{"recordType":"List"}}"#)
        let records = answer.json["records"] as? [[String: Any]] ?? []
        return records.compactMap { $0["recordName"] as? String }.sorted()
    }

    /// Bob, a participant, adds a list to alice's shared zone.
    static func bobAdds(_ name: String, _ emulator: SharelaneEmulator) async throws -> H.Answer {
        let owner = try #require(emulator.userRecordName(for: "alice"))
        return try await call(
            emulator, as: "bob", "shared", "records/modify",
            #"{"zoneID":{"zoneName":"Lists","ownerRecordName":"\#(owner)"},"operations":[{"operationType":"create","#
                + #""record":{"recordName":"\#(name)","recordType":"List","fields":{"title":{"value":"\#(name)"}}}}]}"#)
    }

    @Test(.sharelane(recipeYAML: recipe))
    func aResetGoesBackToTheSeededStateAndEmptyToNothing() async throws {
        let emulator = try #require(SharelaneEmulator.current)
        #expect(emulator.container == "iCloud.com.example.Fixture")
        #expect(try await Self.listNames(emulator) == ["groceries"])
        let added = try await Self.bobAdds("hardware", emulator)
        #expect(added.status == 200, "\(added.text)")
        #expect(try await Self.listNames(emulator) == ["groceries", "hardware"])

        let reset = try await H.raw(emulator.baseURL, "/_sharelane/reset", query: ["ckAPIToken": emulator.apiToken])
        #expect(reset.status == 200, "\(reset.text)")
        #expect(reset.json["reset"] as? [String] == ["iCloud.com.example.Fixture/development"])
        #expect(try await Self.listNames(emulator) == ["groceries"])
        // The recipe's people are signed in again by the fixture: bob still writes.
        #expect(try await Self.bobAdds("garden", emulator).status == 200)

        let empty = try await H.raw(
            emulator.baseURL, "/_sharelane/reset", query: ["ckAPIToken": emulator.apiToken], body: #"{"to":"empty"}"#)
        #expect(empty.status == 200, "\(empty.text)")
        let gone = try await Self.call(
            emulator, as: "alice", "private", "zones/list", "{}")
        let zones = (gone.json["zones"] as? [[String: Any]] ?? []).compactMap {
            ($0["zoneID"] as? [String: Any])?["zoneName"] as? String
        }
        #expect(zones == [defaultZoneName])
    }

    @Test(.sharelane(recipeYAML: recipe))
    func aNamedSnapshotIsRestored() async throws {
        let emulator = try #require(SharelaneEmulator.current)
        #expect(try await Self.bobAdds("hardware", emulator).status == 200)
        let taken = try await H.raw(
            emulator.baseURL, "/_sharelane/snapshots/with-hardware", query: ["ckAPIToken": emulator.apiToken])
        #expect(taken.status == 200, "\(taken.text)")
        #expect(try await Self.bobAdds("garden", emulator).status == 200)
        #expect(try await Self.listNames(emulator) == ["garden", "groceries", "hardware"])
        let restored = try await H.raw(
            emulator.baseURL, "/_sharelane/snapshots/with-hardware/restore", query: ["ckAPIToken": emulator.apiToken])
        #expect(restored.status == 200, "\(restored.text)")
        #expect(try await Self.listNames(emulator) == ["groceries", "hardware"])
        let unknown = try await H.raw(
            emulator.baseURL, "/_sharelane/snapshots/nothing/restore", query: ["ckAPIToken": emulator.apiToken])
        #expect(unknown.status == 404)
        #expect((unknown.json["reason"] as? String ?? "").contains("no snapshot is named nothing"))
        // The library's own calls do the same.
        try await emulator.snapshot("seeded-plus")
        try await emulator.reset()
        #expect(try await Self.listNames(emulator) == ["groceries"])
        try await emulator.restore("seeded-plus")
        #expect(try await Self.listNames(emulator) == ["groceries", "hardware"])
    }

    @Test(.sharelane(recipeYAML: recipe))
    func theUsersEndpointHandsOutWorkingTokensToCallersWithTheAPITokenOnly() async throws {
        let emulator = try #require(SharelaneEmulator.current)
        let refused = try await H.raw(emulator.baseURL, "/_sharelane/users", method: "GET")
        #expect(refused.status == 401)
        let answer = try await H.raw(
            emulator.baseURL, "/_sharelane/users", query: ["ckAPIToken": emulator.apiToken], method: "GET")
        #expect(answer.status == 200, "\(answer.text)")
        let users = try #require(answer.json["users"] as? [String: [String: Any]])
        #expect(users.keys.sorted() == ["alice", "bob"])
        #expect(users["bob"]?["emailAddress"] as? String == "bob@example.com")
        let token = try #require(users["bob"]?["webAuthToken"] as? String)
        let current = try await H.raw(
            emulator.baseURL, "/database/1/iCloud.com.example.Fixture/development/public/users/current",
            query: ["ckAPIToken": emulator.apiToken, "ckWebAuthToken": token], method: "GET")
        #expect(current.json["userRecordName"] as? String == emulator.userRecordName(for: "bob"))
    }

    @Test(.sharelaneEmpty)
    func resettingOneContainerLeavesAnotherAsItWas() async throws {
        let emulator = try #require(SharelaneEmulator.current)
        let alice = try await H.signIn(emulator.baseURL, "alice@example.com", apiToken: emulator.apiToken)
        for container in ["iCloud.a", "iCloud.b"] {
            let made = try await ContainerWorldsTests.createZone(
                emulator.baseURL, token: alice.token, container, "development", apiToken: emulator.apiToken)
            #expect(made.status == 200, "\(made.text)")
        }
        let reset = try await H.raw(
            emulator.baseURL, "/_sharelane/reset", query: ["ckAPIToken": emulator.apiToken],
            body: #"{"container":"iCloud.a","environment":"development"}"#)
        #expect(reset.json["reset"] as? [String] == ["iCloud.a/development"], "\(reset.text)")
        #expect(
            try await ContainerWorldsTests.zoneNames(
                emulator.baseURL, token: alice.token, "iCloud.a", "development", apiToken: emulator.apiToken) == [])
        #expect(
            try await ContainerWorldsTests.zoneNames(
                emulator.baseURL, token: alice.token, "iCloud.b", "development", apiToken: emulator.apiToken)
                == ["Trips"])
    }

    @Test(.sharelane(recipeYAML: recipe))
    func aResetWhileRequestsAreUnderWayIsSeenWholeOrNotAtAll() async throws {
        let emulator = try #require(SharelaneEmulator.current)
        let owner = try #require(emulator.userRecordName(for: "alice"))
        let bobToken = try await emulator.webAuthToken(for: "bob")
        let path = "/database/1/\(emulator.container)/development/shared/records/modify"
        // Four writers add lists of their own, atomically two at a time, while resets go on: every answer is
        // an answer (never a server error), and a list's pair is always found whole or not at all.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for round in 0..<15 {
                        let names = ["w\(writer)-\(round)-a", "w\(writer)-\(round)-b"]
                        let operations = names.map {
                            #"{"operationType":"create","record":{"recordName":"\#($0)","recordType":"List"}}"#
                        }.joined(separator: ",")
                        let answer = try await H.raw(
                            emulator.baseURL, path,
                            query: ["ckAPIToken": emulator.apiToken, "ckWebAuthToken": bobToken],
                            body: #"{"zoneID":{"zoneName":"Lists","ownerRecordName":"\#(owner)"},"atomic":true,"#
                                + #""operations":[\#(operations)]}"#)
                        #expect(answer.status < 500, "\(answer.text)")
                    }
                }
            }
            group.addTask {
                for _ in 0..<10 {
                    try await emulator.reset()
                    let names = try await Self.listNames(emulator)
                    let pairs = Set(names.filter { $0 != "groceries" }.map { String($0.dropLast(2)) })
                    for pair in pairs {
                        #expect(names.contains(pair + "-a") == names.contains(pair + "-b"), "half of \(pair): \(names)")
                    }
                }
            }
            try await group.waitForAll()
        }
        try await emulator.reset()
        #expect(try await Self.listNames(emulator) == ["groceries"])
    }
}
