import CloudKitWire
import Foundation
import ShareKit
import Testing

/// One example per operation of `WireOperation.all`, in the shape Apple's CloudKit Web Services Reference
/// documents (request keys, answer keys), played over raw HTTP against a real `sharelane serve`, and each
/// answer read back through the client's own decoder type. A new operation without an example fails
/// `everyOperationHasAnExample`, so the catalogue, the docs' endpoint table and this suite stay in step.
@Suite(.serialized) struct ConformanceTests {
    /// An operation's example: `{ALICE}`, `{BOB}` and `{SHORTGUID}` in the body are replaced by the seeded
    /// users' record names and the seeded share's short GUID.
    struct Example: Sendable, CustomTestStringConvertible {
        let path: String
        let database: String
        let method: String
        let body: String?
        /// Signed in as Bob rather than Alice.
        let asBob: Bool
        /// The keys the reference documents at the top of the answer.
        let answerKeys: [String]
        /// Reads the answer with the client's type for it.
        let decode: @Sendable (Data) throws -> Void

        init(
            _ path: String, _ database: String = "private", method: String = "POST", asBob: Bool = false,
            body: String?, answerKeys: [String], decode: @escaping @Sendable (Data) throws -> Void
        ) {
            self.path = path
            self.database = database
            self.method = method
            self.body = body
            self.asBob = asBob
            self.answerKeys = answerKeys
            self.decode = decode
        }

        var testDescription: String { "\(method) \(database)/\(path)" }
    }

    static func reads<T: Decodable & SendableMetatype>(_ type: T.Type) -> @Sendable (Data) throws -> Void {
        { data in _ = try JSONDecoder().decode(T.self, from: data) }
    }

    static let lists = #"{"zoneName":"Lists"}"#

    static let examples: [Example] = [
        Example(
            "records/modify",
            body: #"{"zoneID":\#(lists),"operations":[{"operationType":"create","record":{"recordName":"eggs","#
                + #""recordType":"Todo","fields":{"title":{"value":"Eggs","type":"STRING"},"qty":{"value":12}}}}],"#
                + #""atomic":true}"#, answerKeys: ["records"], decode: reads(RecordsResponse.self)),
        Example(
            "records/lookup", body: #"{"zoneID":\#(lists),"records":[{"recordName":"milk"}],"desiredKeys":["title"]}"#,
            answerKeys: ["records"], decode: reads(RecordsResponse.self)),
        Example(
            "records/query",
            body:
                #"{"zoneID":\#(lists),"resultsLimit":10,"query":{"recordType":"Todo","filterBy":[{"comparator":"EQUALS","#
                + #""fieldName":"title","fieldValue":{"value":"Milk"}}],"sortBy":[{"fieldName":"title","ascending":true}]}}"#,
            answerKeys: ["records"], decode: reads(RecordsResponse.self)),
        Example(
            "records/changes", body: #"{"zoneID":\#(lists),"resultsLimit":50}"#,
            answerKeys: ["records", "syncToken", "moreComing"], decode: reads(RecordChangesResponse.self)),
        Example(
            "records/resolve", "public", asBob: true, body: #"{"shortGUIDs":[{"value":"{SHORTGUID}"}]}"#,
            answerKeys: ["results"], decode: reads(ShareResultsResponse.self)),
        Example(
            "records/accept", "public", asBob: true, body: #"{"shortGUIDs":[{"value":"{SHORTGUID}"}]}"#,
            answerKeys: ["results"], decode: reads(ShareResultsResponse.self)),
        Example("zones/list", method: "GET", body: nil, answerKeys: ["zones"], decode: reads(ZonesResponse.self)),
        Example(
            "zones/lookup", body: #"{"zones":[\#(lists)]}"#, answerKeys: ["zones"], decode: reads(ZonesResponse.self)),
        Example(
            "zones/modify", body: #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"New"}}}]}"#,
            answerKeys: ["zones"], decode: reads(ZonesResponse.self)),
        Example(
            "zones/changes", body: "{}", answerKeys: ["zones", "metaSyncToken", "moreComing"],
            decode: reads(ZonesChangesResponse.self)),
        Example(
            "changes/database", body: #"{"resultsLimit":10}"#, answerKeys: ["zones", "syncToken", "moreComing"],
            decode: reads(DatabaseChangesResponse.self)),
        Example(
            "changes/zone", body: #"{"zones":[{"zoneID":\#(lists),"desiredKeys":["title"]}]}"#, answerKeys: ["zones"],
            decode: reads(ZoneChangesResponse.self)),
        Example(
            "users/current", "public", method: "GET", body: nil, answerKeys: ["userRecordName"],
            decode: reads(WireUser.self)),
        Example(
            "users/caller", "public", method: "GET", body: nil, answerKeys: ["userRecordName", "lookupInfo"],
            decode: reads(WireUserIdentity.self)),
        Example(
            "users/discover", "public", body: #"{"lookupInfos":[{"emailAddress":"bob@example.com"}]}"#,
            answerKeys: ["users"], decode: reads(UserIdentitiesResponse.self)),
        Example(
            "users/lookup/email", "public", body: #"{"users":[{"emailAddress":"bob@example.com"}]}"#,
            answerKeys: ["users"], decode: reads(UsersResponse.self)),
        Example(
            "users/lookup/phone", "public", body: #"{"users":[{"phoneNumber":"+15550100002"}]}"#,
            answerKeys: ["users"], decode: reads(UsersResponse.self)),
        Example(
            "users/lookup/id", "public", body: #"{"users":[{"userRecordName":"{BOB}"}]}"#, answerKeys: ["users"],
            decode: reads(UsersResponse.self)),
        Example(
            "users/lookup/contacts", "public", body: "{}", answerKeys: ["users"], decode: reads(UsersResponse.self)),
        Example(
            "users/settings", "public", body: #"{"phoneNumber":"+15550100001","discoverable":true}"#,
            answerKeys: ["phoneNumber", "discoverable"], decode: reads(UserSettingsRequest.self)),
        Example(
            "schema/lookup", "public", method: "GET", body: nil, answerKeys: ["schema"],
            decode: reads(SchemaResponse.self)),
        Example(
            "schema/extend", "public",
            body:
                #"{"schema":{"recordTypes":[{"name":"Note","fields":[{"name":"text","type":"STRING","indexes":["QUERYABLE"]}]}]}}"#,
            answerKeys: ["changes"], decode: reads(SchemaChangesResponse.self)),
        Example(
            "schema/deploy", "public", body: "{}", answerKeys: ["changes"], decode: reads(SchemaChangesResponse.self)),
        Example(
            "subscriptions/modify",
            body: #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"todos","#
                + #""subscriptionType":"query","query":{"recordType":"Todo"},"zoneID":\#(lists),"#
                + #""firesOn":["create","update","delete"]}}]}"#, answerKeys: ["subscriptions"],
            decode: reads(SubscriptionsResponse.self)),
        Example(
            "subscriptions/list", method: "GET", body: nil, answerKeys: ["subscriptions"],
            decode: reads(SubscriptionsResponse.self)),
        Example(
            "subscriptions/lookup", body: #"{"subscriptions":[{"subscriptionID":"lists"}]}"#,
            answerKeys: ["subscriptions"], decode: reads(SubscriptionsResponse.self)),
        Example(
            "tokens/create", body: #"{"apnsEnvironment":"development"}"#,
            answerKeys: ["apnsEnvironment", "apnsToken", "webcourierURL"], decode: reads(TokensResponse.self)),
        Example(
            "tokens/register", body: #"{"apnsEnvironment":"development","apnsToken":"{APNSTOKEN}"}"#,
            answerKeys: ["apnsEnvironment", "apnsToken"], decode: reads(TokensResponse.self)),
        Example(
            "assets/upload",
            body: #"{"zoneID":\#(lists),"tokens":[{"recordName":"milk","recordType":"Todo","fieldName":"photo"}]}"#,
            answerKeys: ["tokens"], decode: reads(UploadAssetsResponse.self)),
        Example(
            "assets/rereference", body: #"{"zoneID":\#(lists),"assets":[{"recordName":"milk","fieldName":"title"}]}"#,
            answerKeys: ["assets"], decode: reads(RereferenceAssetsResponse.self)),
    ]

    @Test("every operation of the catalogue has an example here")
    func everyOperationHasAnExample() {
        #expect(Set(WireOperation.all.map(\.path)) == Set(Self.examples.map(\.path)))
    }

    @Test("an example from the reference's shapes is answered 200 with the documented keys", arguments: examples)
    func example(_ example: Example) async throws {
        try await EmulatorHarness.withEmulator { base in
            let seeded = try await Self.seed(base)
            var body = example.body?
                .replacingOccurrences(of: "{ALICE}", with: seeded.alice)
                .replacingOccurrences(of: "{BOB}", with: seeded.bob)
                .replacingOccurrences(of: "{SHORTGUID}", with: seeded.shortGUID)
            if body?.contains("{APNSTOKEN}") == true {
                let created = try await EmulatorHarness.raw(
                    base, EmulatorHarness.databasePath("private", "tokens/create"),
                    query: ["ckAPIToken": EmulatorHarness.apiToken, "ckWebAuthToken": seeded.aliceToken],
                    body: #"{"apnsEnvironment":"development"}"#)
                body = body?.replacingOccurrences(
                    of: "{APNSTOKEN}", with: created.json["apnsToken"] as? String ?? "missing")
            }
            let answer = try await EmulatorHarness.raw(
                base, EmulatorHarness.databasePath(example.database, example.path),
                query: [
                    "ckAPIToken": EmulatorHarness.apiToken,
                    "ckWebAuthToken": example.asBob ? seeded.bobToken : seeded.aliceToken,
                ], body: body, method: example.method)
            #expect(answer.status == 200, "\(answer.text)")
            for key in example.answerKeys {
                #expect(answer.json[key] != nil, "\(example.path) answers no \(key): \(answer.text)")
            }
            #expect(answer.json["serverErrorCode"] == nil, "\(answer.text)")
            #expect(answer.nextToken != nil, "every answer hands out the next web auth token")
            try example.decode(Data(answer.text.utf8))
        }
    }

    struct Seeded {
        var alice: String
        var bob: String
        var aliceToken: String
        var bobToken: String
        var shortGUID: String
    }

    /// Alice (discoverable) with a zone `Lists`, a record `milk`, a zone subscription `lists`, and a share of the
    /// zone to Bob (discoverable, with a phone number), who has not accepted it yet.
    static func seed(_ base: String) async throws -> Seeded {
        let store = EmulatorHarness.store(base)
        let alice = try await store.signIn(email: "alice@example.com", name: "Alice Appleseed").recordName
        let bob = try await store.signIn(email: "bob@example.com", name: "Bob Brown").recordName
        let lists = ZoneID(zoneName: "Lists")
        _ = try await store.modifyZones([ZoneOperation(.create, lists)], in: .private, as: alice)
        let saved = try await store.modifyRecords(
            [
                .init(
                    .create,
                    Record(recordName: "milk", recordType: "Todo", zoneID: lists, fields: ["title": .string("Milk")])),
                .init(
                    .create,
                    share: Share(
                        recordName: zoneShareRecordName, zoneID: lists, title: "Lists",
                        participants: [
                            Participant(userRecordName: bob, email: "bob@example.com", permission: .readWrite)
                        ])),
            ], in: lists, database: .private, atomic: true, as: alice)
        let share = try #require(saved.last?.savedShare)
        let (aliceToken, _) = try await EmulatorHarness.signIn(base, "alice@example.com")
        let (bobToken, _) = try await EmulatorHarness.signIn(base, "bob@example.com")
        for (token, phone) in [(aliceToken, "+15550100001"), (bobToken, "+15550100002")] {
            let settings = try await EmulatorHarness.raw(
                base, EmulatorHarness.databasePath("public", "users/settings"),
                query: ["ckAPIToken": EmulatorHarness.apiToken, "ckWebAuthToken": token],
                body: #"{"phoneNumber":"\#(phone)","discoverable":true}"#)
            #expect(settings.status == 200, "\(settings.text)")
        }
        let subscription = try await EmulatorHarness.raw(
            base, EmulatorHarness.databasePath("private", "subscriptions/modify"),
            query: ["ckAPIToken": EmulatorHarness.apiToken, "ckWebAuthToken": aliceToken],
            body: #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"lists","#
                + #""subscriptionType":"zone","zoneID":\#(Self.lists)}}]}"#)
        #expect(subscription.status == 200, "\(subscription.text)")
        return Seeded(
            alice: alice, bob: bob, aliceToken: aliceToken, bobToken: bobToken,
            shortGUID: try #require(share.shortGUID))
    }
}
