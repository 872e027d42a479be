import CloudKitWire
import Foundation
import Parity
import ShareKit
import Testing

/// `sharelane serve` answers requests as CloudKit JS 1.x puts them on the wire, the library Apple's own
/// sample web apps still load: while signed out every request carries `ckWebAuthToken=null&ckSession=null`
/// (JavaScript's null written into the URL), once signed in both carry the session; bodies are text/plain.
/// Its user discovery calls `users/lookup/contacts` and `users/lookup/email` and treats a per-user error as
/// a failed lookup. No Apple code runs here: each request is the one that library sends.
@Suite("CloudKit JS 1.x on the wire")
struct CloudKitJS1WireTests {
    typealias H = EmulatorHarness

    /// A request as CloudKit JS 1.x sends it: its version parameters, the session in both token parameters
    /// (the word `null` while signed out), a text/plain body.
    static func send(
        _ base: String, _ database: String, _ operation: String, body: String? = nil, session: String?,
        method: String = "POST"
    ) async throws -> (H.Answer, JSONValue) {
        let query = [
            "ckjsBuildVersion": "1", "ckjsVersion": "1.0", "ckAPIToken": H.apiToken,
            "ckWebAuthToken": session ?? "null", "ckSession": session ?? "null",
        ]
        let answer = try await H.raw(
            base, H.databasePath(database, operation), query: query, body: body, method: method,
            contentType: "text/plain")
        return (answer, (try? JSONValue.parse(answer.text)) ?? .null)
    }

    /// A public record, `welcome`, saved by a signed-in user, for signed-out visitors to query.
    static func publishWelcome(_ base: String) async throws -> String {
        let (token, _) = try await H.signIn(base, "alice@example.com")
        let (saved, _) = try await send(
            base, "public", "records/modify",
            body: #"{"operations":[{"operationType":"create","record":{"recordName":"welcome","recordType":"Note","#
                + #""fields":{"text":{"value":"Hello"}}}}]}"#, session: token)
        #expect(saved.status == 200 && !saved.text.contains("serverErrorCode"), "\(saved.text)")
        return token
    }

    @Test("signed out (ckWebAuthToken=null&ckSession=null), a public query is answered as the API token alone")
    func signedOutPublicQuery() async throws {
        try await H.withEmulator { base in
            _ = try await Self.publishWelcome(base)
            let (answer, json) = try await Self.send(
                base, "public", "records/query", body: #"{"query":{"recordType":"Note"}}"#, session: nil)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(json["records"]?[0]?["recordName"] == .string("welcome"))
            #expect(answer.nextToken == nil, "an answer without a user hands out no token")
        }
    }

    @Test("signed out, whatever needs a user asks for sign-in: 421 with the redirectURL CloudKit JS opens")
    func signedOutNeedsSignIn() async throws {
        try await H.withEmulator { base in
            for (database, operation, method) in [
                ("public", "users/caller", "GET"), ("private", "zones/list", "GET"), ("public", "users/current", "GET"),
            ] {
                let (answer, json) = try await Self.send(base, database, operation, session: nil, method: method)
                #expect(answer.status == 421, "\(operation): \(answer.text)")
                #expect(json["serverErrorCode"] == .string("AUTHENTICATION_REQUIRED"))
                #expect(json["redirectURL"]?.stringValue != nil)
            }
        }
    }

    @Test("signed in, the session in ckSession and ckWebAuthToken names the user; in ckSession alone too")
    func signedInSession() async throws {
        try await H.withEmulator { base in
            let token = try await Self.publishWelcome(base)
            let (both, json) = try await Self.send(base, "public", "users/caller", session: token, method: "GET")
            #expect(both.status == 200, "\(both.text)")
            #expect(json["userRecordName"]?.stringValue != nil)
            let alone = try await H.raw(
                base, H.databasePath("public", "users/caller"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": "null", "ckSession": token], method: "GET")
            #expect(alone.status == 200, "\(alone.text)")
        }
    }

    @Test("discovering users as CloudKit JS 1.x does: contacts answer no users, email lookups no per-user error")
    func discovery() async throws {
        try await H.withEmulator { base in
            let token = try await Self.publishWelcome(base)
            let (contacts, contactsJSON) = try await Self.send(
                base, "public", "users/lookup/contacts", session: token, method: "GET")
            #expect(contacts.status == 200, "\(contacts.text)")
            #expect(contactsJSON["users"] == .array([]))

            // Bob makes himself discoverable; Carol exists and does not; nobody has the third address.
            let (bobToken, bob) = try await H.signIn(base, "bob@example.com")
            _ = try await H.signIn(base, "carol@example.com")
            let (settings, _) = try await Self.send(
                base, "public", "users/settings", body: #"{"discoverable":true}"#, session: bobToken)
            #expect(settings.status == 200, "\(settings.text)")
            let (lookup, json) = try await Self.send(
                base, "public", "users/lookup/email",
                body: #"{"users":[{"emailAddress":"bob@example.com"},{"emailAddress":"carol@example.com"},"#
                    + #"{"emailAddress":"nobody@example.com"}]}"#, session: token)
            #expect(lookup.status == 200, "\(lookup.text)")
            let users = json["users"]?.elements ?? []
            #expect(users.count == 3)
            #expect(users.first?["userRecordName"] == .string(bob))
            #expect(users.first?["firstName"]?.stringValue != nil || users.first?["emailAddress"] != nil)
            for (user, address) in zip(users.dropFirst(), ["carol@example.com", "nobody@example.com"]) {
                #expect(user["serverErrorCode"] == nil, "CloudKit JS 1.x fails the whole lookup on \(user)")
                #expect(user["emailAddress"] == .string(address))
                #expect(user["userRecordName"] == nil, "Carol is not discoverable: nothing of her is told")
            }
        }
    }
}
