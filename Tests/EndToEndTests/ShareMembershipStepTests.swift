import Foundation
import SharelaneTestSupport
import Testing

/// `remove:` and `permission:` lane steps through the binary: the owner takes a participant off a share or
/// changes their permission through the store's share save, and anyone else is refused as CloudKit refuses
/// them, changing nothing.
@Suite("Lane steps that change a share's participants")
struct ShareMembershipStepTests {
    static let header = """
        sharelane: 1
        name: household
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
          carol: { email: carol@example.com }
          dave: { email: dave@example.com }
        owner: alice
        zones:
          Household:
            share:
              participants:
                bob: read-only
                carol: read-write
            records:
              milk: { type: Item, fields: { title: Milk } }
        lanes:

        """

    static let membership = """
          membership:
            steps:
              - reset
              - apply
              - expect: { as: bob, can: read, zone: Household }
              - permission: { zone: Household, participant: bob, to: read-write }
              - save: { as: bob, zone: Household, record: milk, type: Item, fields: { title: Oat milk } }
              - remove: { zone: Household, participant: bob }
              - expect: { as: bob, can: read, zone: Household, to_be: false }
              - expect: { as: bob, can: read, zone: Household, record: milk, to_be: false }
              - expect: { as: carol, field: { zone: Household, record: milk, name: title, equals: Oat milk } }
              - remove: { zone: Household, participant: bob }

        """

    /// Writes the recipe with these lanes in `scratch`, and returns its path.
    func recipe(_ lanes: String, in scratch: TemporaryDirectory) throws -> String {
        try scratch.write("household.yaml", Self.header + lanes)
    }

    @Test("the owner changes a permission and removes a participant, who can then read nothing")
    func ownerRemovesAndChangesPermission() async throws {
        let scratch = try TemporaryDirectory("e2e")
        let path = try recipe(Self.membership, in: scratch)
        let store = "sqlite:" + scratch.file("store.sqlite")
        let result = try await SharelaneBinary.run(["run", "membership", path, "--store", store])
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stdout.contains("✔ permission of bob on Household to read-write — bob: read-only → read-write"),
            "\(result.output)")
        #expect(
            result.stdout.contains("✔ remove bob from Household — bob can no longer see Household"), "\(result.output)")
        // Run again, the second removal finds bob gone, as `delete` finds a record already absent.
        #expect(result.stdout.contains("bob is not a participant (already removed)"), "\(result.output)")

        // The store holds the removal: a check that bob reads fails, after the lane.
        let check = try scratch.write(
            "check.yaml",
            Self.header + """
                  bob-reads:
                    steps:
                      - expect: { as: bob, can: read, zone: Household }

                """)
        let after = try await SharelaneBinary.run(["run", "bob-reads", check, "--store", store])
        #expect(after.status == 1, "\(after.output)")
        #expect(after.output.contains("check.yaml:20:9: error: expectation failed"), "\(after.output)")
    }

    @Test("a participant or a stranger who tries is refused as CloudKit refuses them, and the share stays")
    func othersAreRefused() async throws {
        let scratch = try TemporaryDirectory("e2e")
        let path = try recipe(
            Self.membership + """
                  carol-removes:
                    steps:
                      - reset
                      - apply
                      - remove: { as: carol, zone: Household, participant: bob }
                  strangers:
                    steps:
                      - remove: { as: dave, zone: Household, participant: bob, expect_error: ZONE_NOT_FOUND }
                      - permission: { as: bob, zone: Household, participant: bob, to: read-write, expect_error: ACCESS_DENIED }
                      - expect: { as: bob, can: read, zone: Household }
                      - expect: { as: bob, can: write, zone: Household, record: milk, to_be: false }

                """, in: scratch)
        let store = "sqlite:" + scratch.file("store.sqlite")
        let refused = try await SharelaneBinary.run(["run", "carol-removes", path, "--store", store])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(
            refused.output.contains(
                "household.yaml:34:9: error: remove bob from Household as carol failed: the store refused: ACCESS_DENIED"
            ),
            "\(refused.output)")
        #expect(refused.output.contains("only the owner or an administrator changes"), "\(refused.output)")

        // Nothing changed: bob still reads, still read-only; a stranger and bob himself are refused too.
        let others = try await SharelaneBinary.run(["run", "strangers", path, "--store", store])
        #expect(others.status == 0, "\(others.output)")
        #expect(others.stdout.contains("refused as expected: ZONE_NOT_FOUND"), "\(others.output)")
        #expect(others.stdout.contains("refused as expected: ACCESS_DENIED"), "\(others.output)")
    }

    @Test("a mistyped zone, participant or permission is an error at its place, with the nearest name")
    func mistakesAreRefusedAtTheirPlace() async throws {
        let scratch = try TemporaryDirectory("e2e")
        let path = try recipe(
            """
              typos:
                steps:
                  - remove: { zone: Houshold, participant: bobb }
                  - permission: { zone: Household, participant: carol, to: read_write }
                  - permission: { zone: Household, participant: carol }
                  - remove: { zone: Household, participant: alice }

            """, in: scratch)
        let result = try await SharelaneBinary.run(["validate", path])
        #expect(result.status == 1, "\(result.output)")
        let lines = [
            "household.yaml:20:25: error: zone `Houshold` is not declared in the recipe; did you mean `Household`?",
            "household.yaml:20:48: error: participant `bobb` names no user; did you mean `bob`?",
            "household.yaml:21:64: error: unknown permission `read_write`; did you mean `read-write`?",
            "household.yaml:22:21: error: `permission` needs `to:`",
            "household.yaml:23:49: error: `alice` owns the share of zone `Household`",
        ]
        for line in lines { #expect(result.output.contains(line), "\(line)\n\(result.output)") }
        // Refused before anything runs.
        let run = try await SharelaneBinary.run(["run", "typos", path, "--store", "memory:"])
        #expect(run.status == 1, "\(run.output)")
        #expect(!run.stdout.contains("✔"), "\(run.output)")
    }

    @Test("the steps work the same over http: through sharelane serve")
    func overHTTP() async throws {
        let scratch = try TemporaryDirectory("e2e")
        let path = try recipe(Self.membership, in: scratch)
        let server = try await ServeProcess()
        defer { server.stop() }
        let result = try await server.run(["run", "membership", path])
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stdout.contains("✔ remove bob from Household — bob can no longer see Household"), "\(result.output)")
        #expect(result.stdout.contains("✔ expect bob cannot read Household"), "\(result.output)")
    }
}
