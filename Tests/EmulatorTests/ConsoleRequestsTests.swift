import Foundation
import ShareKit
import Testing

/// The console's Requests page: each client request with its answer, and for a refusal the store's reason
/// with the users named by email.
@Suite struct ConsoleRequestsTests {
    typealias C = ConsoleHarness

    @Test func aRefusedWriteIsListedWithTheRuleThatRefusedIt() async throws {
        try await C.with { console, fixture in
            // Bob, a read-only participant, tries to change alice's plan in the zone she shares with him.
            let signIn = try await console.post(
                "/auth/signin?ckAPIToken=\(EmulatorHarness.percentEncoded(C.apiToken))",
                body: #"{"emailAddress":"bob@example.com"}"#, headers: [("Content-Type", "application/json")])
            #expect(signIn.status == 200, "\(signIn.text)")
            let token = try #require(
                (try JSONSerialization.jsonObject(with: Data(signIn.text.utf8)) as? [String: Any])?["ckWebAuthToken"]
                    as? String)
            let path =
                "/database/1/iCloud.local.sharelane/development/shared/records/modify?ckAPIToken="
                + EmulatorHarness.percentEncoded(C.apiToken) + "&ckWebAuthToken="
                + EmulatorHarness.percentEncoded(token)
            let write = try await console.post(
                path,
                body: #"{"zoneID":{"zoneName":"Secrets","ownerRecordName":"\#(fixture.alice.recordName)"},"#
                    + #""operations":[{"operationType":"forceUpdate","record":{"recordName":"plan","recordType":"Note","#
                    + #""fields":{"pages":{"value":4}}}}]}"#,
                headers: [("Content-Type", "application/json")])
            #expect(write.status == 200, "\(write.text)")
            #expect(write.text.contains("ACCESS_DENIED"), "\(write.text)")
            // The wire names the caller by the email it signed in with, not by its user record name.
            #expect(write.text.contains("bob@example.com has read-only access"), "\(write.text)")
            #expect(!write.text.contains(fixture.bob.recordName), "\(write.text)")

            let page = try await console.get("/requests", cookie: try await console.signIn())
            #expect(page.status == 200)
            #expect(page.main.contains("POST /database/1/iCloud.local.sharelane/development/shared/records/modify"))
            #expect(page.main.contains("<td>bob@example.com</td>"), "\(page.main)")
            #expect(page.main.contains("<code>Secrets/plan</code>: <strong>ACCESS_DENIED</strong> not allowed to"))
            #expect(page.main.contains("bob@example.com has read-only access to this share"), "\(page.main)")
            // Paths only: no token is ever shown.
            #expect(!page.text.contains(token))
            #expect(!page.text.contains("ckAPIToken="))
        }
    }

    /// Signs `email` in over the wire and gives the path prefix of its shared database, with its tokens.
    private static func sharedDatabase(_ console: ConsoleHarness, as email: String) async throws -> (
        prefix: String, query: String, token: String
    ) {
        let signIn = try await console.post(
            "/auth/signin?ckAPIToken=\(EmulatorHarness.percentEncoded(C.apiToken))",
            body: #"{"emailAddress":"\#(email)"}"#, headers: [("Content-Type", "application/json")])
        let token = try #require(
            (try JSONSerialization.jsonObject(with: Data(signIn.text.utf8)) as? [String: Any])?["ckWebAuthToken"]
                as? String, "\(signIn.text)")
        return (
            "/database/1/iCloud.local.sharelane/development/shared/records/",
            "?ckAPIToken=" + EmulatorHarness.percentEncoded(C.apiToken) + "&ckWebAuthToken="
                + EmulatorHarness.percentEncoded(token), token
        )
    }

    @Test func anOutsiderIsToldNothingOnTheWireAndTheConsoleSaysWhy() async throws {
        try await C.with { console, fixture in
            // Carol is on no share of alice's zone: to her it does not exist, by query as by lookup.
            let carol = try await Self.sharedDatabase(console, as: "carol@example.com")
            let zone = #"{"zoneName":"Secrets","ownerRecordName":"\#(fixture.alice.recordName)"}"#
            let query = try await console.post(
                carol.prefix + "query" + carol.query,
                body: #"{"zoneID":\#(zone),"query":{"recordType":"Note"}}"#,
                headers: [("Content-Type", "application/json")])
            #expect(query.status == 404, "\(query.text)")
            #expect(query.text.contains("ZONE_NOT_FOUND"), "\(query.text)")
            let lookup = try await console.post(
                carol.prefix + "lookup" + carol.query,
                body: #"{"zoneID":\#(zone),"records":[{"recordName":"plan"}]}"#,
                headers: [("Content-Type", "application/json")])
            #expect(lookup.status == 200, "\(lookup.text)")
            #expect(lookup.text.contains("ZONE_NOT_FOUND"), "\(lookup.text)")
            // On the wire the caller is named by email, and nothing says the zone exists or whose share it is.
            for answer in [query.text, lookup.text] {
                #expect(answer.contains("carol@example.com"), "\(answer)")
                #expect(!answer.contains(fixture.carol.recordName), "\(answer)")
                #expect(!answer.lowercased().contains("participant"), "\(answer)")
            }

            // Bob reaches the zone; a record that is not there is NOT_FOUND, and the console says so too.
            let bob = try await Self.sharedDatabase(console, as: "bob@example.com")
            let missing = try await console.post(
                bob.prefix + "lookup" + bob.query,
                body: #"{"zoneID":\#(zone),"records":[{"recordName":"no-such-note"}]}"#,
                headers: [("Content-Type", "application/json")])
            #expect(missing.text.contains("NOT_FOUND"), "\(missing.text)")

            let page = try await console.get("/requests", cookie: try await console.signIn())
            // The console's reader may know everything: whose zone it is, and why carol does not reach it.
            #expect(
                page.main.contains(
                    "<strong>ZONE_NOT_FOUND</strong> carol@example.com is not a participant of any share of "
                        + "alice@example.com&#39;s zone Secrets"), "\(page.main)")
            #expect(
                page.main.contains("<code>Secrets/no-such-note</code>: <strong>NOT_FOUND</strong>"),
                "\(page.main)")
            #expect(page.main.contains("no record named no-such-note in alice@example.com&#39;s zone Secrets"))
            // Every refused request has its reason: no empty cell beside a refusal.
            #expect(!page.main.contains("<td class=\"number\">404</td><td></td>"), "\(page.main)")
            // The intro is text, not markdown.
            #expect(!page.main.contains("`"), "\(page.main)")
        }
    }
}
