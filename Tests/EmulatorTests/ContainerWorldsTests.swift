import Applier
import CloudKitWire
import PlanModel
import Planner
import Foundation
import Recipe
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport
import Testing

/// `sharelane serve` keeps each container, and each container's development and production, apart, as
/// CloudKit does: two apps' test suites, or a rehearsal of a schema deploy, on one serve see what separate
/// containers would.
@Suite struct ContainerWorldsTests {
    typealias H = EmulatorHarness

    static func path(_ container: String, _ environment: String, _ operation: String) -> String {
        "/database/1/\(container)/\(environment)/private/\(operation)"
    }

    /// Creates the zone `Trips` as the token's user in a world, over raw HTTP as a client written from the
    /// reference would.
    static func createZone(
        _ url: String, token: String, _ container: String, _ environment: String, apiToken: String = H.apiToken
    ) async throws -> H.Answer {
        try await H.raw(
            url, path(container, environment, "zones/modify"),
            query: ["ckAPIToken": apiToken, "ckWebAuthToken": token],
            body: #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Trips"}}}]}"#)
    }

    static func zoneNames(
        _ url: String, token: String, _ container: String, _ environment: String, apiToken: String = H.apiToken
    ) async throws -> [String] {
        let answer = try await H.raw(
            url, path(container, environment, "zones/list"),
            query: ["ckAPIToken": apiToken, "ckWebAuthToken": token],
            body: "{}")
        #expect(answer.status == 200, "\(answer.text)")
        let zones = answer.json["zones"] as? [[String: Any]] ?? []
        return zones.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }.filter {
            $0 != defaultZoneName
        }.sorted()
    }

    @Test func aZoneCreatedInOneContainerIsListedThereOnly() async throws {
        try await H.withEmulator { url in
            let alice = try await H.signIn(url, "alice@example.com")
            let created = try await Self.createZone(url, token: alice.token, "iCloud.a", "development")
            #expect(created.status == 200, "\(created.text)")
            #expect(try await Self.zoneNames(url, token: alice.token, "iCloud.a", "development") == ["Trips"])
            #expect(try await Self.zoneNames(url, token: alice.token, "iCloud.b", "development") == [])
            #expect(try await Self.zoneNames(url, token: alice.token, "iCloud.a", "production") == [])
            // The same user, by the same token, in each: one person, a user record per container.
            let me = try await H.raw(
                url, "/database/1/iCloud.b/development/public/users/current",
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": alice.token], method: "GET")
            #expect(me.json["userRecordName"] as? String == alice.user)
        }
    }

    @Test func aContainerThatCannotBeOneIsRefusedWithItsReason() async throws {
        try await H.withEmulator { url in
            let alice = try await H.signIn(url, "alice@example.com")
            let answer = try await Self.createZone(url, token: alice.token, "..", "development")
            #expect(answer.status == 400)
            #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST")
            #expect((answer.json["reason"] as? String ?? "").contains("container"))
        }
    }

    @Test func aRecipeAppliedInOneContainerIsAllToAddInAnother() async throws {
        try await TemporaryDirectory.with("worlds") { scratch in
            let store = try SQLiteStore(path: scratch.file("serve.sqlite"), logger: H.quiet)
            try await InProcessEmulator.with(store: store, apiToken: H.apiToken) { url in
                let yaml = """
                    sharelane: 1
                    name: trips
                    container: CONTAINER
                    owner: alice
                    users: { alice: { email: alice@example.com }, bob: { email: bob@example.com } }
                    zones:
                      Trips:
                        share: { participants: { bob: read-only } }
                        records: { italy: { type: Trip, fields: { title: Italy } } }
                    """
                func recipe(_ container: String) throws -> Recipe {
                    try RecipeLoader(environment: [:], overrides: [:]).load(
                        yaml: yaml.replacingOccurrences(of: "CONTAINER", with: container),
                        file: scratch.file("trips.yaml"))
                }
                func plan(_ recipe: Recipe) async throws -> Plan {
                    try await Planner(store: H.store(url, for: recipe), logger: H.quiet).plan(recipe)
                }
                let a = try recipe("iCloud.com.example.A")
                let first = try await plan(a)
                #expect(first.summary.add > 0)
                _ = try await Applier(store: H.store(url, for: a), logger: H.quiet).apply(first)
                #expect(try await plan(a).changes.isEmpty)
                let b = try recipe("iCloud.com.example.B")
                #expect(try await plan(b).summary.add == first.summary.add)
                // Serve's file keeps each world apart on disk too.
                #expect(
                    FileManager.default.fileExists(
                        atPath: scratch.file("serve.sqlite") + ".worlds/iCloud.com.example.A/development.sqlite"))
            }
        }
    }
}
