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
}
