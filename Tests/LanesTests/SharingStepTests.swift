import Foundation
import Lanes
import Recipe
import ShareKit
import Testing

/// Steps that act as participants: accept, save through the shared database, expect access.
@Suite("Steps as participants")
struct SharingStepTests {
    static let recipe = """
        sharelane: 1
        name: family
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
          dana: { email: dana@example.com }
          carol: { email: carol@example.com }
        owner: alice
        zones:
          Family:
            share:
              title: Family
              participants:
                bob: { permission: read-write, accepted: false }
                dana: { permission: read-only, accepted: false }
            records:
              milk: { type: Todo, fields: { title: Milk } }
        lanes:
          family:
            steps:
              - apply
              - accept: { as: bob, zone: Family }
              - accept: { as: bob, zone: Family }
              - accept: { as: dana, zone: Family }
              - save: { as: bob, zone: Family, record: eggs, type: Todo, fields: { title: Eggs } }
              - expect: { field: { zone: Family, record: eggs, name: title, equals: Eggs } }
              - expect: { as: bob, records: 2, zone: Family }
              - expect: { as: dana, can: read, zone: Family, to_be: true }
              - expect: { as: dana, can: write, zone: Family, to_be: false }
              - expect: { as: bob, can: write, zone: Family, record: milk, to_be: true }
              - expect: { as: bob, can: share, zone: Family, to_be: false }
              - expect: { as: carol, can: read, zone: Family, to_be: false }
              - expect: { as: carol, records: 0, zone: Family }
          dana-writes:
            steps:
              - apply
              - accept: { as: dana, zone: Family }
              - save: { as: dana, zone: Family, record: sneaky, type: Todo, fields: { title: Sneaky } }
          wipe:
            steps:
              - apply
              - reset
        """

    /// The recipe's users, signed in.
    private func shareFamily(_ harness: LaneHarness) async throws -> (alice: User, bob: User, dana: User) {
        (
            try await harness.user("alice@example.com"), try await harness.user("bob@example.com"),
            try await harness.user("dana@example.com")
        )
    }

    @Test func participantSavesThroughItsSharedDatabase() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        let (alice, bob, _) = try await shareFamily(harness)

        let report = try await harness.run("family")

        #expect(report.succeeded, "\(harness.output)")
        // Bob's record landed in Alice's zone, written by Bob…
        let eggs = try await harness.record("eggs", zone: ZoneID(zoneName: "Family"), asEmail: "alice@example.com")
        #expect(eggs?.modified?.userRecordName == bob.recordName)
        // …which Bob reaches in his shared database under Alice's record name, and not in his private one.
        let shared = ZoneID(zoneName: "Family", ownerRecordName: alice.recordName)
        #expect(try await harness.record("eggs", zone: shared, database: .shared, asEmail: "bob@example.com") != nil)
        let bobsZones = try await harness.store.listZones(in: .private, as: bob.recordName)
        #expect(!bobsZones.contains { $0.zoneID.zoneName == "Family" })
        #expect(harness.output.contains("✔ accept Family as bob — already accepted"), "\(harness.output)")
        #expect(harness.output.contains("✔ save Todo Family/eggs as bob"), "\(harness.output)")
    }

    @Test func laneRunsTwiceOnTheSameStore() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        _ = try await shareFamily(harness)

        let first = try await harness.run("family")
        let second = try await harness.run("family")

        #expect(first.succeeded && second.succeeded, "\(harness.output)")
    }

    @Test func readOnlyParticipantsSaveIsRefused() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        _ = try await shareFamily(harness)

        let report = try await harness.run("dana-writes")

        #expect(!report.succeeded)
        #expect(report.failure?.location?.line == 38)
        #expect(harness.output.contains("ACCESS_DENIED"), "\(harness.output)")
        #expect(
            try await harness.record("sneaky", zone: ZoneID(zoneName: "Family"), asEmail: "alice@example.com") == nil)
    }

    @Test func expectationsChangeNothing() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        _ = try await shareFamily(harness)
        _ = try await harness.run("family")
        let before = try await harness.record("milk", zone: ZoneID(zoneName: "Family"), asEmail: "alice@example.com")

        _ = try await harness.run("family")

        let after = try await harness.record("milk", zone: ZoneID(zoneName: "Family"), asEmail: "alice@example.com")
        #expect(before?.changeTag == after?.changeTag, "an expect step wrote the record it checked")
    }

    @Test func resetWipesALocalStore() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        _ = try await shareFamily(harness)

        let report = try await harness.run("wipe")

        #expect(report.succeeded, "\(harness.output)")
        #expect(try await harness.record("milk", zone: ZoneID(zoneName: "Family"), asEmail: "alice@example.com") == nil)
    }
}
