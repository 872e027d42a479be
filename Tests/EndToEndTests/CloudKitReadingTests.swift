import Foundation
import SharelaneTestSupport
import Testing

/// `show` and `access` on a `cloudkit:` store, which acts only as the user its web auth token signs in (here
/// a `serve` standing in for Apple's service, through `CLOUDKIT_BASE_URL`): they read that user's view, once,
/// never refused for the recipe's other people, and `access --as EMAIL` reads that user.
@Suite struct CloudKitReadingTests {
    @Test func showAndAccessReadTheSignedInUsersView() async throws {
        let scratch = try TemporaryDirectory("e2e-cloudkit-reading")
        let recipe = BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml").path
        // A folder whose own recipe names other people: `--as` must not need the recipe to name the user.
        _ = try scratch.write(
            "sharelane.yaml",
            "sharelane: 1\nname: mine\nusers: { mia: { email: mia@example.com } }\nowner: mia\nzones: { Notes: {} }\n")
        let binary = SharelaneBinary.executable.path
        let store = "cloudkit:iCloud.com.example.Lists"
        let script = try scratch.write(
            "read.sh",
            """
            export CLOUDKIT_BASE_URL="$SHARELANE_URL" CLOUDKIT_WEB_AUTH_TOKEN="$SHARELANE_WEB_AUTH_TOKEN_ALICE"
            echo "== show"; "\(binary)" show "\(recipe)" --store \(store) 2>&1
            echo "== access"; "\(binary)" access "\(recipe)" --store \(store) 2>&1
            echo "== access as"; "\(binary)" access --store \(store) --as alice@example.com 2>&1
            echo "== end"
            """)
        let result = try await SharelaneBinary.run(
            ["serve", "--recipe", recipe, "--lane", "demo", "--", "sh", script], in: scratch.url)
        #expect(result.status == 0, "\(result.output)")
        let out = result.stdout
        #expect(!out.contains("AUTHENTICATION_FAILED"), "\(out)")
        #expect(out.contains("== show\nStore cloudkit:iCloud.com.example.Lists/development: 1 user\n"), "\(out)")
        #expect(out.contains("user alice@example.com"), "\(out)")
        // Each share once, not once for each of the recipe's people the store cannot tell apart from alice.
        #expect(out.contains("Access in cloudkit:iCloud.com.example.Lists/development — 4 users × 2 shares"), "\(out)")
        #expect(
            out.contains("== access as\nAccess in cloudkit:iCloud.com.example.Lists/development — 1 user × 2 shares"),
            "\(out)")
        #expect(out.contains("== end"), "\(out)")
    }

    @Test func aNameThatDoesNotResolveIsSaidAtOnceNotRetried() async throws {
        let scratch = try TemporaryDirectory("e2e-cloudkit-dns")
        // `.invalid` never resolves (RFC 6761).
        let environment = [
            "CLOUDKIT_BASE_URL": "https://no-such-host.invalid", "CLOUDKIT_API_TOKEN": "api-token-12345678",
            "CLOUDKIT_WEB_AUTH_TOKEN": "web-token-12345678", "SHARELANE_TOKEN_FILE": scratch.file("tokens.json"),
        ]
        let recipe = BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml").path
        for arguments in [
            ["show", recipe, "--store", "cloudkit:iCloud.com.example.Lists"],
            ["login", "--store", "cloudkit:iCloud.com.example.Lists"],
        ] {
            let result = try await SharelaneBinary.run(arguments, in: scratch.url, environment: environment)
            #expect(result.status == 1, "\(arguments): \(result.output)")
            #expect(
                result.stderr.contains(
                    "the name no-such-host.invalid does not resolve (DNS); check the store's address"),
                "\(result.stderr)")
            #expect(
                !result.output.contains("TRY_AGAIN_LATER") && !result.output.contains("retrying"), "\(result.output)")
        }
    }
}
