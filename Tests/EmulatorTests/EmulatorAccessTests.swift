import CloudKitWire
import Foundation
import ShareKit
import SharelaneTestSupport
import Testing

/// Raw HTTP against the emulator: authentication, access and malformed requests get CloudKit's codes and
/// statuses, and change nothing.
@Suite(.serialized) struct EmulatorAccessTests {
    typealias H = EmulatorHarness

    /// A `records/modify` that tries to overwrite Alice's note.
    static func overwrite(owner: String) -> String {
        #"{"operations":[{"operationType":"forceUpdate","record":{"recordName":"note","recordType":"Note","#
            + #""fields":{"title":{"value":"hacked"}}}}],"zoneID":{"zoneName":"Lists","ownerRecordName":"\#(owner)"}}"#
    }

    @Test func refusedRequestsGetCloudKitCodesAndChangeNothing() async throws {
        try await H.withEmulator(strictTokens: true) { base in
            let store = H.store(base)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            let dana = try await store.signIn(email: "dana@example.com", name: nil).recordName
            let lists = ZoneID(zoneName: "Lists")
            _ = try await store.modifyZones([ZoneOperation(.create, lists)], in: .private, as: alice)
            let saved = try await store.modifyRecords(
                [
                    .init(
                        .create,
                        Record(
                            recordName: "note", recordType: "Note", zoneID: lists, fields: ["title": .string("before")])
                    ),
                    .init(.create, share: Share.zoneWide(lists, title: "Lists")),
                ], in: lists, database: .private, atomic: true, as: alice)
            var share = try #require(saved[1].savedShare)
            share.participants = [Participant(userRecordName: dana, email: "dana@example.com", permission: .readOnly)]
            let updated = try await store.modifyRecords(
                [.init(.update, share: share)], in: lists, database: .private, atomic: false, as: alice)
            let url = try #require(updated[0].savedShare?.url)
            _ = try await store.acceptShare(url: url, as: dana)
            let original = try #require(saved[0].savedRecord)
            let modifyPath = H.databasePath("private", "records/modify")

            // No web auth token: sign-in needed.
            var answer = try await H.raw(
                base, modifyPath, query: ["ckAPIToken": H.apiToken], body: Self.overwrite(owner: alice))
            #expect(answer.status == 421)
            #expect(answer.json["serverErrorCode"] as? String == "AUTHENTICATION_REQUIRED")
            #expect((answer.json["redirectURL"] as? String)?.contains("/auth/signin?ticket=") == true)
            #expect(answer.nextToken == nil)

            // A wrong API token.
            let (carolToken, carol) = try await H.signIn(base, "carol@example.com")
            answer = try await H.raw(
                base, modifyPath, query: ["ckAPIToken": "wrong", "ckWebAuthToken": carolToken],
                body: Self.overwrite(owner: alice))
            #expect(answer.status == 401)
            #expect(answer.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")

            // A token is good for one request; the answer hands out the next one.
            answer = try await H.raw(
                base, H.databasePath("public", "users/current"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": carolToken],
                method: "GET")
            #expect(answer.status == 200)
            #expect(answer.json["userRecordName"] as? String == carol)
            let next = try #require(answer.nextToken)
            #expect(next != carolToken)
            answer = try await H.raw(
                base, modifyPath, query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": carolToken],
                body: Self.overwrite(owner: alice))
            #expect(answer.status == 421)
            #expect(answer.json["serverErrorCode"] as? String == "AUTHENTICATION_REQUIRED")
            #expect((answer.json["reason"] as? String)?.contains("already used") == true)

            // A token the server never issued.
            answer = try await H.raw(
                base, modifyPath, query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": "bogus+token/="],
                body: Self.overwrite(owner: alice))
            #expect(answer.status == 421)

            // Carol's valid token on Alice's private zone: she is not its owner.
            answer = try await H.raw(
                base, modifyPath, query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": next],
                body: Self.overwrite(owner: alice))
            // CloudKit answers per-record refusals inside a 200, one entry per operation.
            #expect(answer.status == 200, "\(answer.text)")
            #expect(Self.code(answer) == "ACCESS_DENIED", "\(answer.text)")
            // ... nor through the shared database, where nothing was shared with her: the answer a missing zone
            // gets, so that it tells her nothing of what exists.
            let next2 = try #require(answer.nextToken)
            answer = try await H.raw(
                base, H.databasePath("shared", "records/modify"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": next2],
                body: Self.overwrite(owner: alice))
            #expect(answer.status == 200, "\(answer.text)")
            #expect(Self.code(answer) == "ZONE_NOT_FOUND", "\(answer.text)")
            // A request-level refusal (reading a zone that was not shared with her) is an HTTP error, the one a
            // missing zone gets: it tells her nothing of what exists.
            let next3 = try #require(answer.nextToken)
            answer = try await H.raw(
                base, H.databasePath("shared", "records/query"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": next3],
                body: #"{"zoneID":{"zoneName":"Lists","ownerRecordName":"\#(alice)"},"query":{"recordType":"Note"}}"#)
            #expect(answer.status == 404, "\(answer.text)")
            #expect(answer.json["serverErrorCode"] as? String == "ZONE_NOT_FOUND")

            // Dana accepted read-only: her write through the shared database is refused per record.
            let (danaToken, _) = try await H.signIn(base, "dana@example.com")
            answer = try await H.raw(
                base, H.databasePath("shared", "records/modify"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": danaToken],
                body: Self.overwrite(owner: alice))
            #expect(answer.status == 200, "\(answer.text)")
            #expect(Self.code(answer) == "ACCESS_DENIED", "\(answer.text)")

            // Nothing changed.
            let now = try await store.lookupRecords(["note"], in: lists, database: .private, as: alice)
            #expect(now[0] == .saved(original))
        }
    }

    @Test("a web auth token unused for longer than its lifetime is refused; the HTTP store signs in again")
    func anExpiredTokenIsRefused() async throws {
        let clock = MovableClock()
        try await H.withEmulator(tokenLifetime: .seconds(60), clock: clock.emulatorClock) { base in
            let (token, _) = try await H.signIn(base, "alice@example.com")
            clock.advance(by: .seconds(61))
            let answer = try await H.raw(
                base, H.databasePath("private", "zones/list"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token],
                method: "GET")
            #expect(answer.status == 421)
            #expect((answer.json["reason"] as? String)?.contains("expired") == true)
            // The HTTP store signs in again by itself.
            let store = H.store(base)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            clock.advance(by: .seconds(61))
            #expect(try await store.listZones(in: .private, as: alice).map(\.zoneID.zoneName).contains(defaultZoneName))
        }
    }

    @Test func anAppleDocumentationCreateIsAccepted() async throws {
        try await H.withEmulator { base in
            let (token, alice) = try await H.signIn(base, "mei@example.com")
            let body =
                #"{"operations":[{"operationType":"create","record":{"recordType":"Person","#
                + #""fields":{"firstName":{"value":"Mei"}}}}]}"#
            let answer = try await H.raw(
                base, H.databasePath("private", "records/modify"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token],
                body: body)
            #expect(answer.status == 200, "\(answer.text)")
            let record = try #require((answer.json["records"] as? [[String: Any]])?.first)
            #expect((record["recordName"] as? String)?.isEmpty == false)
            #expect(record["recordType"] as? String == "Person")
            #expect((record["recordChangeTag"] as? String)?.isEmpty == false)
            let fields = try #require(record["fields"] as? [String: Any])
            let firstName = try #require(fields["firstName"] as? [String: Any])
            #expect(firstName["value"] as? String == "Mei")
            #expect(firstName["type"] as? String == "STRING")
            let created = try #require(record["created"] as? [String: Any])
            #expect(created["userRecordName"] as? String == alice)
            #expect(created["timestamp"] is NSNumber)
        }
    }

    @Test func malformedAndOversizedBodiesAreBadRequests() async throws {
        try await H.withEmulator(maxBodyBytes: 8192) { base in
            var (token, _) = try await H.signIn(base, "alice@example.com")
            let modify = H.databasePath("private", "records/modify")
            let tooMany =
                "{\"operations\":["
                + (0...200).map { _ in #"{"operationType":"forceDelete","record":{"recordName":"x"}}"# }
                .joined(separator: ",") + "]}"
            let bodies = [
                "{", "not json", #"{"operations":5}"#, #"{"operations":[{"operationType":"explode","record":{}}]}"#,
                #"{"operations":[{"operationType":"create","record":{"recordType":"T","fields":{"x":{"value":1,"type":"NOPE"}}}}]}"#,
                String(repeating: " ", count: 9000) + "{}", tooMany, "",
            ]
            for body in bodies {
                let answer = try await H.raw(
                    base, modify, query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token], body: body)
                #expect(answer.status == 400, "\(body.prefix(40)): \(answer.text)")
                #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST")
                token = try #require(answer.nextToken)
            }
            var answer = try await H.raw(
                base, H.databasePath("private", "records/explode"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token],
                body: "{}")
            #expect(answer.status == 400)
            #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST")
            answer = try await H.raw(
                base, H.databasePath("nowhere", "zones/list"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token],
                method: "GET")
            #expect(answer.status == 400)
            token = try #require(answer.nextToken)
            // The server is still there.
            answer = try await H.raw(
                base, H.databasePath("private", "zones/list"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token],
                method: "GET")
            #expect(answer.status == 200)
        }
    }

    @Test("a number no field can hold is a BAD_REQUEST naming the field, and the server keeps serving")
    func outOfRangeNumbersAreBadRequests() async throws {
        try await H.withEmulator { base in
            var (token, _) = try await H.signIn(base, "alice@example.com")
            let modify = H.databasePath("private", "records/modify")
            let fields = [
                ("TIMESTAMP", "1e300"), ("TIMESTAMP", "-1e300"), ("TIMESTAMP", "9.3e18"), ("TIMESTAMP", "1e400"),
                ("INT64", "1e300"), ("DOUBLE", #""nan""#), ("DOUBLE", #""-inf""#),
            ]
            for (type, value) in fields {
                let body =
                    #"{"operations":[{"operationType":"create","record":{"recordName":"r","recordType":"T","fields":{"when":{"type":"\#(type)","value":\#(value)}}}}],"zoneID":{"zoneName":"_defaultZone"}}"#
                let answer = try await H.raw(
                    base, modify, query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token], body: body)
                #expect(answer.status == 400, "\(value): \(answer.text)")
                #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST")
                if value != "1e400" {  // 1e400 is no JSON number at all: the body is not JSON
                    #expect(answer.text.contains("when"), "the reason names the field: \(answer.text)")
                }
                token = try #require(answer.nextToken)
            }
            let answer = try await H.raw(
                base, H.databasePath("private", "zones/list"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token], method: "GET")
            #expect(answer.status == 200)
        }
    }

    static func code(_ answer: EmulatorHarness.Answer) -> String? {
        if let code = answer.json["serverErrorCode"] as? String { return code }
        return (answer.json["records"] as? [[String: Any]])?.first?["serverErrorCode"] as? String
    }
}
