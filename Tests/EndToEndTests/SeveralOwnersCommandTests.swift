import Foundation
import SharelaneTestSupport
import Testing

/// A recipe whose zones have several owners, through the real binary: the worked recipe's lane on `memory:`,
/// the commands a user runs on the embedded store, and `cloudkit:`, where each owner applies their own part.
@Suite struct SeveralOwnersCommandTests {
    /// The web auth tokens a token file holds.
    static func webAuthTokens(in file: String) -> [String] {
        file.components(separatedBy: "\"webAuthToken\"").dropFirst().compactMap { rest in
            rest.split(separator: "\"").dropFirst().first.map(String.init)
        }
    }

    static let familyOwners = BuiltProducts.packageRoot.appendingPathComponent("Recipes/family-owners.yaml").path

    @Test("the worked recipe's lane passes on memory:")
    func theWorkedRecipesLanePassesInMemory() async throws {
        let result = try await SharelaneBinary.run(
            ["run", "everyone-shares", Self.familyOwners, "--store", "memory:"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("lane everyone-shares succeeded: 11 steps"), "\(result.output)")
    }

    @Test("plan names each owner, apply writes each as its owner, export of every owner plans to nothing")
    func theCommandsFollowEachOwner() async throws {
        let scratch = try TemporaryDirectory("e2e-owners")
        let store = ["--store", scratch.file("store.sqlite")]
        let plan = try await SharelaneBinary.run(["plan", Self.familyOwners] + store, in: scratch.url)
        #expect(plan.status == 0, "\(plan.output)")
        #expect(plan.stdout.contains("for recipe family-owners, each zone as its owner:"), "\(plan.stdout)")
        #expect(plan.stdout.contains("bob's private database, as bob:\n  + zone Trip"), "\(plan.stdout)")
        #expect(plan.stdout.contains("carol's private database, as carol:\n  + zone Kitchen"), "\(plan.stdout)")

        let saved = try await SharelaneBinary.run(
            ["plan", Self.familyOwners, "--out", scratch.file("reviewed.plan")] + store, in: scratch.url)
        #expect(saved.status == 0, "\(saved.output)")
        let apply = try await SharelaneBinary.run(
            ["apply", scratch.file("reviewed.plan"), "--yes"] + store, in: scratch.url)
        #expect(apply.status == 0, "\(apply.output)")
        #expect(apply.stdout.contains("Apply complete! Resources: 14 added"), "\(apply.stdout)")

        // Each zone in its owner's private database, and only there.
        let show = try await SharelaneBinary.run(["show", "--recipe", Self.familyOwners] + store, in: scratch.url)
        let byUser = show.stdout.components(separatedBy: "\nuser ")
        for (user, zone) in [("alice", "Groceries"), ("bob", "Trip"), ("carol", "Kitchen")] {
            let view = try #require(byUser.first { $0.hasPrefix("\(user)@example.com") }, "\(show.stdout)")
            let zones = view.split(separator: "\n").filter { $0.hasPrefix("    zone ") }
            #expect(zones == ["    zone \(zone)"], "\(view)")
        }

        let export = try await SharelaneBinary.run(
            ["export", "--recipe", Self.familyOwners, "--out", scratch.file("exported.yaml")] + store,
            in: scratch.url)
        #expect(export.status == 0, "\(export.output)")
        let exported = try String(contentsOfFile: scratch.file("exported.yaml"), encoding: .utf8)
        #expect(exported.contains("  Trip:\n    owner: bob\n"), "\(exported)")
        let again = try await SharelaneBinary.run(["plan", scratch.file("exported.yaml")] + store, in: scratch.url)
        #expect(again.stdout.contains("No changes"), "\(again.output)")
    }

    @Test("on cloudkit: each owner applies their own zones; the others' wait for them")
    func onCloudKitEachOwnerAppliesTheirOwn() async throws {
        let scratch = try TemporaryDirectory("e2e-owners-cloudkit")
        _ = try scratch.write(
            "accounts.yaml",
            """
            sharelane: 1
            name: accounts
            container: iCloud.com.example.Family
            users:
              alice: { email: alice@example.com }
              bob: { email: bob@example.com }
            owner: alice
            """)
        _ = try scratch.write(
            "family.yaml",
            """
            sharelane: 1
            name: family
            container: iCloud.com.example.Family
            users:
              alice: { email: alice@example.com }
              bob: { email: bob@example.com }
            owner: alice
            zones:
              Groceries:
                records:
                  milk: { type: Item, fields: { title: Milk } }
              Trip:
                owner: bob
                records:
                  rome: { type: Item, fields: { title: Rome } }
            """)
        let binary = SharelaneBinary.executable.path
        let store = "cloudkit:iCloud.com.example.Family"
        let script = try scratch.write(
            "provision.sh",
            """
            export CLOUDKIT_BASE_URL="$SHARELANE_URL" SHARELANE_TOKEN_FILE="$PWD/tokens.json"
            unset CLOUDKIT_WEB_AUTH_TOKEN
            login() { printf '%s\\n' "$2" | "\(binary)" login --store \(store) --recipe family.yaml --as "$1" --paste >/dev/null 2>&1; }
            login alice "$SHARELANE_WEB_AUTH_TOKEN_ALICE"
            echo "== alice"; "\(binary)" apply family.yaml --store \(store) --yes 2>&1
            login bob "$SHARELANE_WEB_AUTH_TOKEN_BOB"
            echo "== both"; "\(binary)" apply family.yaml --store \(store) --yes 2>&1
            echo "== again"; "\(binary)" plan family.yaml --store \(store) 2>&1
            echo "== private"
            "\(binary)" show --store "$SHARELANE_URL" --container iCloud.com.example.Family --as alice@example.com 2>&1
            "\(binary)" show --store "$SHARELANE_URL" --container iCloud.com.example.Family --as bob@example.com 2>&1
            echo "== tokens"; cat tokens.json
            echo "== end"
            """)
        let result = try await SharelaneBinary.run(
            ["serve", "--recipe", "accounts.yaml", "--", "sh", script], in: scratch.url)
        #expect(result.status == 0, "\(result.output)")
        let parts = result.stdout.components(separatedBy: "== ")
        // Alice alone signed in: her zone is written, Bob's waits for him.
        let alice = try #require(parts.first { $0.hasPrefix("alice\n") }, "\(result.stdout)")
        #expect(alice.contains("+ zone Groceries"), "\(alice)")
        #expect(!alice.contains("+ zone Trip"), "\(alice)")
        #expect(
            alice.contains("zone Trip: waiting for bob, its owner, to sign in (`sharelane login --as bob`)"), "\(alice)"
        )
        #expect(alice.contains("Apply complete! Resources: 2 added"), "\(alice)")
        // Both signed in: Bob's zone is written as Bob, in his own private database.
        let both = try #require(parts.first { $0.hasPrefix("both\n") }, "\(result.stdout)")
        #expect(
            both.contains("bob's private database, as bob:\n  + zone Trip")
                || both.contains("as bob:\n\n  + zone Trip"), "\(both)")
        #expect(both.contains("Apply complete! Resources: 2 added"), "\(both)")
        let again = try #require(parts.first { $0.hasPrefix("again\n") }, "\(result.stdout)")
        #expect(again.contains("No changes"), "\(again)")
        // Each zone is in its owner's private database, and only there.
        let shown = try #require(parts.first { $0.hasPrefix("private\n") }, "\(result.stdout)")
        let byUser = shown.components(separatedBy: "Store ")
        let alicesView = try #require(byUser.first { $0.contains("as alice@example.com") }, "\(shown)")
        let bobsView = try #require(byUser.first { $0.contains("as bob@example.com") }, "\(shown)")
        #expect(alicesView.contains("zone Groceries") && !alicesView.contains("zone Trip"), "\(alicesView)")
        #expect(bobsView.contains("zone Trip") && !bobsView.contains("zone Groceries"), "\(bobsView)")
        // Each user's newest token went back to their own entry of the token file; none is printed.
        let tokens = try #require(parts.first { $0.hasPrefix("tokens\n") }, "\(result.stdout)")
        #expect(tokens.components(separatedBy: "\"email\"").count == 3, "\(tokens)")
        for part in parts where !part.hasPrefix("tokens\n") {
            for token in Self.webAuthTokens(in: tokens) { #expect(!part.contains(token)) }
        }
        #expect(result.stdout.contains("== end"), "\(result.stdout)")
    }
}
