import AsyncHTTPClient
import CloudKitWire
import Foundation
import ShareKit
import SharelaneTestSupport
import Testing

/// Subscriptions and notifications over a real `sharelane serve`: raw HTTP with the keys of Apple's
/// reference (subscriptions/modify, list, lookup; tokens/create on both paths; the webcourier long-poll as
/// CloudKit JS polls it), and the same through the client.
@Suite(.serialized) struct SubscriptionWireTests {
    typealias H = EmulatorHarness

    /// A raw session: each answer's token replaces the last, as CloudKit JS chains them.
    final class Session: @unchecked Sendable {
        let base: String
        var token: String

        init(base: String, token: String) {
            self.base = base
            self.token = token
        }

        func post(_ path: String, _ body: String?, method: String = "POST") async throws -> H.Answer {
            let answer = try await H.raw(
                base, path, query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token], body: body, method: method)
            if let next = answer.nextToken { token = next }
            return answer
        }
    }

    /// A GET of the webcourier URL exactly as `tokens/create` gave it, as CloudKit JS polls it.
    static func get(_ url: String) async throws -> H.Answer {
        let response = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: url), timeout: .seconds(TestDeadlines.httpRead.components.seconds))
        let data = Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)
        return H.Answer(
            status: Int(response.status.code),
            json: (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:], nextToken: nil,
            text: String(decoding: data, as: UTF8.self))
    }

    @Test("subscriptions/modify, list and lookup answer with Apple's keys; errors come per subscription")
    func subscriptionsOverRawHTTP() async throws {
        try await H.withEmulator { base in
            let (token, _) = try await H.signIn(base, "alice@example.com")
            let alice = Session(base: base, token: token)
            let modify = H.databasePath("private", "subscriptions/modify")
            var answer = try await alice.post(
                modify,
                #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"todos","#
                    + #""subscriptionType":"query","query":{"recordType":"Todo","filterBy":[{"comparator":"EQUALS","#
                    + #""fieldName":"done","fieldValue":{"value":0}}]},"firesOn":["create","update"],"#
                    + #""notificationInfo":{"alertBody":"Todo changed"}}},"#
                    + #"{"operationType":"create","subscription":{"subscriptionID":"twin","subscriptionType":"query","#
                    + #""query":{"recordType":"Todo"},"firesOn":["update","create"]}},"#
                    + #"{"operationType":"create","subscription":{"subscriptionID":"lists","subscriptionType":"zone","#
                    + #""zoneID":{"zoneName":"Lists"}}}]}"#)
            #expect(answer.status == 200, "\(answer.text)")
            var entries = try #require(answer.json["subscriptions"] as? [[String: Any]])
            #expect(entries.count == 3)
            #expect(entries[0]["subscriptionID"] as? String == "todos")
            #expect(entries[0]["subscriptionType"] as? String == "query")
            #expect(entries[0]["firesOn"] as? [String] == ["create", "update"])
            #expect((entries[0]["notificationInfo"] as? [String: Any])?["alertBody"] as? String == "Todo changed")
            #expect((entries[0]["query"] as? [String: Any])?["recordType"] as? String == "Todo")
            #expect(entries[1]["serverErrorCode"] as? String == "INTERNAL_ERROR")
            #expect(entries[1]["subscriptionID"] as? String == "twin")
            #expect(entries[2]["subscriptionType"] as? String == "zone")
            #expect((entries[2]["zoneID"] as? [String: Any])?["zoneName"] as? String == "Lists")

            answer = try await alice.post(H.databasePath("private", "subscriptions/list"), nil, method: "GET")
            entries = try #require(answer.json["subscriptions"] as? [[String: Any]])
            #expect(entries.compactMap { $0["subscriptionID"] as? String } == ["lists", "todos"])

            answer = try await alice.post(
                H.databasePath("private", "subscriptions/lookup"),
                #"{"subscriptions":[{"subscriptionID":"todos"},{"subscriptionID":"nope"}]}"#)
            entries = try #require(answer.json["subscriptions"] as? [[String: Any]])
            #expect(entries[0]["subscriptionID"] as? String == "todos")
            #expect(entries[1]["serverErrorCode"] as? String == "NOT_FOUND")

            // A delete answers only {subscriptionID}.
            answer = try await alice.post(
                modify, #"{"operations":[{"operationType":"delete","subscription":{"subscriptionID":"lists"}}]}"#)
            entries = try #require(answer.json["subscriptions"] as? [[String: Any]])
            #expect(entries.count == 1)
            #expect(entries[0].keys.sorted() == ["subscriptionID"])
            #expect(entries[0]["subscriptionID"] as? String == "lists")
        }
    }

    @Test("a malformed subscription request is refused whole and saves nothing")
    func malformed() async throws {
        try await H.withEmulator { base in
            let (token, _) = try await H.signIn(base, "alice@example.com")
            let alice = Session(base: base, token: token)
            let answer = try await alice.post(
                H.databasePath("private", "subscriptions/modify"),
                #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"a","#
                    + #""subscriptionType":"database"}},{"operationType":"replace","subscription":{"#
                    + #""subscriptionID":"b","subscriptionType":"database"}}]}"#)
            #expect(answer.status == 400)
            #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST")
            #expect((answer.json["reason"] as? String)?.contains("replace") == true)
            let list = try await alice.post(H.databasePath("private", "subscriptions/list"), "{}")
            #expect((list.json["subscriptions"] as? [Any])?.isEmpty == true)
        }
    }

    @Test(
        "tokens/create on the device path and the database path; the webcourier long-poll delivers each notification once"
    )
    func tokensAndWebcourier() async throws {
        try await H.withEmulator { base in
            let (token, _) = try await H.signIn(base, "alice@example.com")
            let alice = Session(base: base, token: token)
            _ = try await alice.post(
                H.databasePath("private", "subscriptions/modify"),
                #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"todos","#
                    + #""subscriptionType":"query","query":{"recordType":"Todo"},"firesOn":["create","delete"],"#
                    + #""notificationInfo":{"alertBody":"Todo!"}}}]}"#)
            var answer = try await alice.post(
                "/device/1/\(H.container)/\(H.environment)/tokens/create", #"{"apnsEnvironment":"development"}"#)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.json["apnsEnvironment"] as? String == "development")
            let apnsToken = try #require(answer.json["apnsToken"] as? String)
            let courier = try #require(answer.json["webcourierURL"] as? String)
            #expect(courier.hasPrefix(base))
            #expect(!courier.contains(H.apiToken))

            // The reference's path is answered too (live answers 405 there).
            answer = try await alice.post(
                H.databasePath("private", "tokens/create"), #"{"apnsEnvironment":"production"}"#)
            #expect(answer.status == 200)
            #expect(answer.json["apnsEnvironment"] as? String == "production")
            answer = try await alice.post(
                "/device/1/\(H.container)/\(H.environment)/tokens/register",
                #"{"apnsEnvironment":"development","apnsToken":"\#(apnsToken)"}"#)
            #expect(answer.json["apnsToken"] as? String == apnsToken)

            // Nothing yet: a bounded wait, then an empty body (poll again).
            let started = ContinuousClock.now
            var poll = try await Self.get(courier + "&wait=0.3")
            #expect(poll.status == 200)
            #expect(poll.text.isEmpty)
            #expect(ContinuousClock.now - started >= .milliseconds(250))

            _ = try await alice.post(
                H.databasePath("private", "records/modify"),
                #"{"operations":[{"operationType":"create","record":{"recordName":"t1","recordType":"Todo","#
                    + #""fields":{"title":{"value":"Eggs"}}}},{"operationType":"create","record":{"recordName":"t2","#
                    + #""recordType":"Todo","fields":{"title":{"value":"Milk"}}}}]}"#)
            // Each GET answers one notification, oldest first (a `wait` too large to count is clamped).
            poll = try await Self.get(courier + "&wait=1e300")
            let aps = try #require(poll.json["aps"] as? [String: Any])
            #expect(aps["alert"] as? String == "Todo!")
            let ck = try #require(poll.json["ck"] as? [String: Any])
            #expect(ck["cid"] as? String == H.container)
            let qry = try #require(ck["qry"] as? [String: Any])
            #expect(qry["sid"] as? String == "todos")
            #expect(qry["rid"] as? String == "t1")
            #expect(qry["fo"] as? Int == 1)
            #expect(qry["dbs"] as? Int == 2)
            #expect(qry["zid"] as? String == "_defaultZone")
            poll = try await Self.get(courier)
            #expect(((poll.json["ck"] as? [String: Any])?["qry"] as? [String: Any])?["rid"] as? String == "t2")
            poll = try await Self.get(courier + "&wait=0")
            #expect(poll.text.isEmpty)

            // An unknown token ends the loop (non-2xx).
            poll = try await H.raw(
                base, WireSpelling.webcourierPath, query: ["tok": "nope", "wait": "0"], method: "GET")
            #expect(poll.status == 404)
        }
    }

    @Test("through the client: Bob saves into Alice's shared zone and Alice's database subscription notifies her")
    func clientRoundTrip() async throws {
        try await H.withEmulator { base in
            let store = H.store(base)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
            let lists = ZoneID(zoneName: "Lists")
            _ = try await store.modifyZones([ZoneOperation(.create, lists)], in: .private, as: alice)
            var share = Share.zoneWide(lists, title: "Lists")
            share.participants = [Participant(userRecordName: bob, email: "bob@example.com", permission: .readWrite)]
            let saved = try await store.modifyRecords(
                [.init(.create, share: share)], in: lists, database: .private, atomic: true, as: alice)
            _ = try await store.acceptShare(url: try #require(saved[0].savedShare?.url), as: bob)

            let outcomes = try await store.modifySubscriptions(
                [.init(.create, .database("private-changes", alertBody: "Lists changed"))], in: .private, as: alice)
            #expect(outcomes == [.saved(.database("private-changes", alertBody: "Lists changed"))])
            #expect(
                try await store.listSubscriptions(in: .private, as: alice).map(\.subscriptionID) == ["private-changes"])
            let looked = try await store.lookupSubscriptions(["private-changes", "gone"], in: .private, as: alice)
            #expect(looked[1].error?.code == .notFound)
            let bobs = try await store.modifySubscriptions(
                [.init(.create, .query("bobs", recordType: "Todo", zoneWide: true, firesOn: [.create]))], in: .shared,
                as: bob)
            #expect(bobs[0].error?.code == .badRequest, "the shared database takes database subscriptions only")

            let channel = try await store.openNotificationChannel(apnsEnvironment: "development", as: alice)
            #expect(channel.webcourierURL != nil)
            #expect(try await store.receiveNotifications(on: channel, limit: 10, as: alice).isEmpty)

            let sharedZone = ZoneID(zoneName: "Lists", ownerRecordName: alice)
            let written = try await store.modifyRecords(
                [.init(.create, Record(recordName: "eggs", recordType: "Todo", zoneID: sharedZone, fields: [:]))],
                in: sharedZone, database: .shared, atomic: true, as: bob)
            #expect(written[0].error == nil)
            let got = try await store.receiveNotifications(on: channel, limit: 10, as: alice)
            #expect(got.map(\.subscriptionID) == ["private-changes"])
            #expect(got.first?.kind == .database)
            #expect(got.first?.database == .private)
            #expect(got.first?.alertBody == "Lists changed")
            #expect(try await store.receiveNotifications(on: channel, limit: 10, as: alice).isEmpty)

            let deleted = try await store.modifySubscriptions([.delete("private-changes")], in: .private, as: alice)
            #expect(deleted == [.deleted(subscriptionID: "private-changes")])
        }
    }
}
