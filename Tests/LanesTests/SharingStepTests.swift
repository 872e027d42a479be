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
          dana-refused:
            steps:
              - apply
              - accept: { as: dana, zone: Family }
              - save: { as: dana, zone: Family, record: sneaky, type: Todo, fields: { title: S }, expect_error: ACCESS_DENIED }
              - expect: { records: 1, zone: Family }
          bob-expected-refused:
            steps:
              - apply
              - accept: { as: bob, zone: Family }
              - save: { as: bob, zone: Family, record: eggs, type: Todo, fields: { title: Eggs }, expect_error: ACCESS_DENIED }
          wrong-code:
            steps:
              - apply
              - accept: { as: dana, zone: Family }
              - delete: { as: dana, zone: Family, record: milk, expect_error: CONFLICT }
          leave-twice:
            steps:
              - apply
              - accept: { as: bob, zone: Family }
              - leave: { as: bob, zone: Family }
              - leave: { as: bob, zone: Family, expect_error: NOT_FOUND }
              - leave: { as: carol, zone: Family, expect_error: ZONE_NOT_FOUND }
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
        // It says what it emptied: one container in one environment.
        #expect(
            harness.output.contains("✔ reset — emptied \(Recipe.defaultContainer) in development"), "\(harness.output)")
    }

    @Test("leaving again is NOT_FOUND, leaving a share one is not part of ZONE_NOT_FOUND, as Docs/Sharing.md says")
    func leavingAgainIsNotFound() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        _ = try await shareFamily(harness)
        let report = try await harness.run("leave-twice")
        #expect(report.succeeded, "\(harness.output)")
        #expect(harness.output.contains("removed from bob's shared database"), "\(harness.output)")
        #expect(!harness.output.contains("already left"), "\(harness.output)")
        #expect(
            harness.output.components(separatedBy: "refused as expected: NOT_FOUND").count == 2, "\(harness.output)")
        #expect(harness.output.contains("refused as expected: ZONE_NOT_FOUND"), "\(harness.output)")
    }

    @Test("a step with expect_error succeeds when the store refuses it with that code, and nothing changes")
    func expectedRefusalSucceeds() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        let report = try await harness.run("dana-refused")
        #expect(report.succeeded, "\(harness.output)")
        #expect(harness.output.contains("— refused as expected: ACCESS_DENIED: Family/sneaky"), "\(harness.output)")
        #expect(harness.output.contains("dana has read-only access"), "handles, not record names: \(harness.output)")
    }

    @Test("a step with expect_error fails when the store allows it, or refuses it with another code")
    func unexpectedOutcomesFail() async throws {
        let allowed = try LaneHarness(recipe: Self.recipe)
        #expect(!(try await allowed.run("bob-expected-refused")).succeeded)
        #expect(
            allowed.output.contains("expected the store to refuse it with ACCESS_DENIED, but it was allowed"),
            "\(allowed.output)")
        let other = try LaneHarness(recipe: Self.recipe)
        #expect(!(try await other.run("wrong-code")).succeeded)
        #expect(
            other.output.contains("expected the store to refuse it with CONFLICT, but it refused with ACCESS_DENIED"),
            "\(other.output)")
    }

    @Test("expect_error takes a CloudKit error code, with a hint for a misspelt one")
    func expectErrorTakesACode() throws {
        let yaml = Self.recipe.replacingOccurrences(of: "expect_error: CONFLICT", with: "expect_error: CONFLIKT")
        #expect(throws: RecipeErrors.self) { try RecipeLoader(environment: [:]).load(yaml: yaml, file: "family.yaml") }
        do {
            _ = try RecipeLoader(environment: [:]).load(yaml: yaml, file: "family.yaml")
        } catch {
            #expect(
                error.errors.map(\.message) == [
                    "`expect_error` takes a CloudKit error code such as ACCESS_DENIED, not `CONFLIKT`; did you mean `CONFLICT`?"
                ])
        }
    }
}
