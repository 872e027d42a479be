import Foundation
import SharelaneTestSupport
import Testing

/// Sharing with testers on a `cloudkit:` store, which acts only as its signed-in owner and finds other people
/// only when they made themselves discoverable (here a `serve` standing in for Apple's service, through
/// `CLOUDKIT_BASE_URL`, where nobody is discoverable): participants are invited by email, as CloudKit adds
/// them, whether or not the store would look them up.
@Suite struct CloudKitTestersTests {
    @Test func testersWhoAreNotDiscoverableAreInvitedByEmail() async throws {
        let scratch = try TemporaryDirectory("e2e-cloudkit-testers")
        // Olivia and Paul have accounts (they signed in once); Zoe has none. No one is discoverable.
        _ = try scratch.write(
            "accounts.yaml",
            """
            sharelane: 1
            name: accounts
            container: iCloud.com.example.Trips
            users:
              olivia: { email: olivia@example.com }
              paul: { email: paul@example.com }
            owner: olivia
            zones:
              Scratch: {}
            """)
        _ = try scratch.write(
            "trips.yaml",
            """
            sharelane: 1
            name: trips
            container: iCloud.com.example.Trips
            users:
              olivia: { email: olivia@example.com }
              paul: { email: Paul@Example.com }
              zoe: { email: zoe@example.com }
            owner: olivia
            zones:
              Trips:
                records:
                  lisbon: { type: Trip, fields: { title: Lisbon } }
                share:
                  participants:
                    paul: { permission: read-write }
                    zoe: { permission: read-only }
            """)
        let binary = SharelaneBinary.executable.path
        let store = "cloudkit:iCloud.com.example.Trips"
        let script = try scratch.write(
            "provision.sh",
            """
            export CLOUDKIT_BASE_URL="$SHARELANE_URL" CLOUDKIT_WEB_AUTH_TOKEN="$SHARELANE_WEB_AUTH_TOKEN_OLIVIA"
            echo "== plan"; "\(binary)" plan trips.yaml --store \(store) 2>&1
            echo "== apply"; "\(binary)" apply trips.yaml --store \(store) --yes 2>&1
            echo "== plan again"; "\(binary)" plan trips.yaml --store \(store) 2>&1
            echo "== as paul"; "\(binary)" show --store "$SHARELANE_URL" --container iCloud.com.example.Trips \\
              --as paul@example.com 2>&1
            echo "== end"
            """)
        let result = try await SharelaneBinary.run(
            ["serve", "--recipe", "accounts.yaml", "--", "sh", script], in: scratch.url)
        #expect(result.status == 0, "\(result.output)")
        let out = result.stdout
        let parts = out.components(separatedBy: "== ")
        let plan = try #require(parts.first { $0.hasPrefix("plan\n") }, "\(out)")
        #expect(!plan.contains("has no account"), "\(plan)")
        #expect(plan.contains("+ participant Trips/paul"), "\(plan)")
        #expect(plan.contains("+ participant Trips/zoe"), "\(plan)")
        #expect(plan.contains("waiting for zoe to accept (the store cannot act as zoe); invited as zoe@example.com"))
        let apply = try #require(parts.first { $0.hasPrefix("apply\n") }, "\(out)")
        #expect(apply.contains("Apply complete! Resources: 5 added"), "\(apply)")
        // The share knows them by the email they were invited with: nothing to do again, nobody removed.
        let again = try #require(parts.first { $0.hasPrefix("plan again\n") }, "\(out)")
        #expect(again.contains("No changes"), "\(again)")
        #expect(again.contains("invited as Paul@Example.com; send them http"), "\(again)")
        // Paul, who never made himself discoverable, is on the share: it is in his view, to accept.
        let paul = try #require(parts.first { $0.hasPrefix("as paul\n") }, "\(out)")
        #expect(paul.contains("Trips"), "\(paul)")
        #expect(out.contains("== end"), "\(out)")
    }
}
