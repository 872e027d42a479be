import CloudKitWire
import Foundation
import ShareKit
import Testing

/// `records/query`, `records/lookup`, `records/changes`, `zones/changes` and `changes/zone` with the keys of
/// Apple's reference (`desiredKeys`, `numbersAsStrings`, `zoneWide`, `desiredRecordTypes`, `reverse`,
/// `metaSyncToken`), sent as raw JSON to a real `sharelane serve`, as a client written from the reference
/// would send them.
@Suite(.serialized) struct QueryAndChangesWireTests {
    /// One signed-in user talking raw HTTP: each answer's token is used for the next request.
    final class RawUser: @unchecked Sendable {
        let base: String
        var token: String
        let userRecordName: String

        init(_ base: String, _ email: String) async throws {
            self.base = base
            (token, userRecordName) = try await EmulatorHarness.signIn(base, email)
        }

        func post(_ database: String, _ operation: String, _ body: String) async throws -> EmulatorHarness.Answer {
            let answer = try await EmulatorHarness.raw(
                base, EmulatorHarness.databasePath(database, operation),
                query: ["ckAPIToken": EmulatorHarness.apiToken, "ckWebAuthToken": token], body: body)
            if let next = answer.nextToken { token = next }
            return answer
        }
    }

    static func names(_ answer: EmulatorHarness.Answer) -> [String] {
        (answer.json["records"] as? [[String: Any]] ?? []).compactMap { $0["recordName"] as? String }
    }

    /// Alice's private zones `Trips` and `Food` with a few `Stop` records, one `Note`.
    static func seed(_ alice: RawUser) async throws {
        _ = try await alice.post(
            "private", "zones/modify",
            #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Trips"}}},"#
                + #"{"operationType":"create","zone":{"zoneID":{"zoneName":"Food"}}}]}"#)
        func stop(_ name: String, _ rank: Int, _ lat: Double, _ lon: Double, _ tags: [String]) -> String {
            #"{"operationType":"create","record":{"recordName":"\#(name)","recordType":"Stop","fields":{"#
                + #""rank":{"value":\#(rank),"type":"INT64"},"score":{"value":\#(Double(rank) + 0.5),"type":"DOUBLE"},"#
                + #""title":{"value":"Stop \#(name)","type":"STRING"},"#
                + #""where":{"value":{"latitude":\#(lat),"longitude":\#(lon)},"type":"LOCATION"},"#
                + #""tags":{"value":[\#(tags.map { "\"\($0)\"" }.joined(separator: ","))],"type":"STRING_LIST"}}}}"#
        }
        let trips = try await alice.post(
            "private", "records/modify",
            #"{"zoneID":{"zoneName":"Trips"},"operations":["#
                + [
                    stop("milan", 3, 45.4642, 9.19, ["city", "food"]), stop("como", 1, 45.8081, 9.0852, ["lake"]),
                    stop("rome", 2, 41.9028, 12.4964, ["city"]),
                    #"{"operationType":"create","record":{"recordName":"note","recordType":"Note","fields":{"#
                        + #""text":{"value":"pack","type":"STRING"}}}}"#,
                ].joined(separator: ",") + "]}")
        #expect(trips.status == 200, "\(trips.text)")
        let food = try await alice.post(
            "private", "records/modify",
            #"{"zoneID":{"zoneName":"Food"},"operations":["# + stop("bologna", 4, 44.4949, 11.3426, ["food"]) + "]}")
        #expect(food.status == 200, "\(food.text)")
    }

    @Test("records/query and records/lookup answer only desiredKeys, and numbers as strings with numbersAsStrings")
    func desiredKeysAndNumbersAsStrings() async throws {
        try await EmulatorHarness.withEmulator { base in
            let alice = try await RawUser(base, "alice@example.com")
            try await Self.seed(alice)
            let query = try await alice.post(
                "private", "records/query",
                #"{"zoneID":{"zoneName":"Trips"},"query":{"recordType":"Stop","sortBy":[{"fieldName":"rank"}]},"#
                    + #""desiredKeys":["rank","score"],"numbersAsStrings":true}"#)
            #expect(query.status == 200, "\(query.text)")
            let records = query.json["records"] as? [[String: Any]] ?? []
            #expect(Self.names(query) == ["como", "rome", "milan"])
            let fields = records.first?["fields"] as? [String: [String: Any]] ?? [:]
            #expect(fields.keys.sorted() == ["rank", "score"])
            #expect(fields["rank"]?["value"] as? String == "1")
            #expect(fields["rank"]?["type"] as? String == "INT64")
            #expect(fields["score"]?["value"] as? String == "1.5")

            let lookup = try await alice.post(
                "private", "records/lookup",
                #"{"zoneID":{"zoneName":"Trips"},"records":[{"recordName":"rome"}],"desiredKeys":["title"]}"#)
            let looked = (lookup.json["records"] as? [[String: Any]])?.first?["fields"] as? [String: [String: Any]]
            #expect(looked?.keys.sorted() == ["title"])
            #expect(looked?["title"]?["value"] as? String == "Stop rome")
            // records/modify takes the same keys for the records it answers.
            let modify = try await alice.post(
                "private", "records/modify",
                #"{"zoneID":{"zoneName":"Trips"},"numbersAsStrings":true,"desiredKeys":["rank"],"operations":["#
                    + #"{"operationType":"forceUpdate","record":{"recordName":"rome","recordType":"Stop","#
                    + #""fields":{"rank":{"value":7,"type":"INT64"}}}}]}"#)
            let saved = (modify.json["records"] as? [[String: Any]])?.first?["fields"] as? [String: [String: Any]]
            #expect(saved?["rank"]?["value"] as? String == "7", "\(modify.text)")
            // Without numbersAsStrings, numbers stay numbers.
            let plain = try await alice.post(
                "private", "records/lookup",
                #"{"zoneID":{"zoneName":"Trips"},"records":[{"recordName":"rome"}],"desiredKeys":["rank"]}"#)
            #expect(plain.text.contains(#""value":7"#), "\(plain.text)")
        }
    }

    @Test("NEAR with a distance, list and token comparators, and a sort by distance, over the wire")
    func comparatorsOverTheWire() async throws {
        try await EmulatorHarness.withEmulator { base in
            let alice = try await RawUser(base, "alice@example.com")
            try await Self.seed(alice)
            // Development creates a LOCATION field without indexes, as CloudKit does: index it to query it.
            let store = EmulatorHarness.store(base)
            let signedIn = try await store.signIn(email: "alice@example.com", name: nil).recordName
            _ = try await store.extendSchema(
                Schema(recordTypes: [
                    RecordTypeSchema(
                        "Stop", fields: [SchemaField("where", .location, indexes: [.queryable, .sortable])])
                ]), as: signedIn)
            let near = try await alice.post(
                "private", "records/query",
                #"{"zoneID":{"zoneName":"Trips"},"query":{"recordType":"Stop","filterBy":[{"comparator":"NEAR","#
                    + #""fieldName":"where","fieldValue":{"value":{"latitude":45.4642,"longitude":9.19},"type":"LOCATION"},"#
                    + #""distance":50000}],"sortBy":[{"fieldName":"where","relativeLocation":{"latitude":41.9,"#
                    + #""longitude":12.5}}]}}"#)
            #expect(near.status == 200, "\(near.text)")
            #expect(Self.names(near) == ["milan", "como"])
            let any = try await alice.post(
                "private", "records/query",
                #"{"zoneID":{"zoneName":"Trips"},"query":{"recordType":"Stop","filterBy":[{"comparator":"LIST_CONTAINS_ANY","#
                    + #""fieldName":"tags","fieldValue":{"value":["lake","food"],"type":"STRING_LIST"}}]}}"#)
            #expect(Self.names(any) == ["como", "milan"])
            let notBegins = try await alice.post(
                "private", "records/query",
                #"{"zoneID":{"zoneName":"Trips"},"query":{"recordType":"Stop","filterBy":[{"comparator":"NOT_LIST_MEMBER_BEGINS_WITH","#
                    + #""fieldName":"tags","fieldValue":{"value":"ci","type":"STRING"}}]}}"#)
            #expect(Self.names(notBegins) == ["como"])
            // A token search needs a SEARCHABLE index, which a saved STRING field gets in development.
            let tokens = try await alice.post(
                "private", "records/query",
                #"{"zoneID":{"zoneName":"Trips"},"query":{"recordType":"Stop","filterBy":[{"comparator":"CONTAINS_ALL_TOKENS","#
                    + #""fieldName":"title","fieldValue":{"value":"ROME stop","type":"STRING"}}]}}"#)
            #expect(tokens.status == 200, "\(tokens.text)")
            #expect(Self.names(tokens) == ["rome"])
            let noDistance = try await alice.post(
                "private", "records/query",
                #"{"zoneID":{"zoneName":"Trips"},"query":{"recordType":"Stop","filterBy":[{"comparator":"NEAR","#
                    + #""fieldName":"where","fieldValue":{"value":{"latitude":45,"longitude":9},"type":"LOCATION"}}]}}"#
            )
            #expect(noDistance.status == 400)
            #expect(noDistance.json["serverErrorCode"] as? String == "BAD_REQUEST")
            #expect(
                (noDistance.json["reason"] as? String)?.contains("distance in metres") == true, "\(noDistance.text)")
        }
    }

    @Test("a zoneWide query without zoneID searches every zone, sorted together, in pages")
    func zoneWideQuery() async throws {
        try await EmulatorHarness.withEmulator { base in
            let alice = try await RawUser(base, "alice@example.com")
            try await Self.seed(alice)
            let first = try await alice.post(
                "private", "records/query",
                #"{"zoneWide":true,"resultsLimit":3,"query":{"recordType":"Stop","sortBy":[{"fieldName":"rank","ascending":false}]}}"#
            )
            #expect(first.status == 200, "\(first.text)")
            #expect(Self.names(first) == ["bologna", "milan", "rome"])
            let marker = try #require(first.json["continuationMarker"] as? String)
            let second = try await alice.post(
                "private", "records/query",
                #"{"zoneWide":true,"resultsLimit":3,"continuationMarker":"\#(marker)","#
                    + #""query":{"recordType":"Stop","sortBy":[{"fieldName":"rank","ascending":false}]}}"#)
            #expect(Self.names(second) == ["como"])
            #expect(second.json["continuationMarker"] == nil)
            // zoneWide is ignored when a zoneID is given, as Apple's reference says.
            let one = try await alice.post(
                "private", "records/query",
                #"{"zoneWide":true,"zoneID":{"zoneName":"Food"},"query":{"recordType":"Stop"}}"#)
            #expect(Self.names(one) == ["bologna"])
            // Without zoneWide, no zoneID means the default zone, which has no stops.
            let none = try await alice.post("private", "records/query", #"{"query":{"recordType":"Stop"}}"#)
            #expect(Self.names(none).isEmpty, "\(none.text)")
        }
    }

    @Test("records/changes reads one custom zone's changes since a token and refuses the default zone")
    func recordChanges() async throws {
        try await EmulatorHarness.withEmulator { base in
            let alice = try await RawUser(base, "alice@example.com")
            try await Self.seed(alice)
            let all = try await alice.post(
                "private", "records/changes", #"{"zoneID":{"zoneName":"Trips"},"desiredKeys":["rank"]}"#)
            #expect(all.status == 200, "\(all.text)")
            #expect(Set(Self.names(all)) == ["milan", "como", "rome", "note"])
            #expect(all.json["moreComing"] as? Bool == false)
            let fields = (all.json["records"] as? [[String: Any]])?.first?["fields"] as? [String: Any]
            #expect(fields.map { Array($0.keys) }?.allSatisfy { $0 == "rank" } == true)
            let token = try #require(all.json["syncToken"] as? String)
            _ = try await alice.post(
                "private", "records/modify",
                #"{"zoneID":{"zoneName":"Trips"},"operations":[{"operationType":"forceDelete","record":{"recordName":"rome"}}]}"#
            )
            let since = try await alice.post(
                "private", "records/changes", #"{"zoneID":{"zoneName":"Trips"},"syncToken":"\#(token)"}"#)
            let entries = since.json["records"] as? [[String: Any]] ?? []
            #expect(entries.count == 1)
            #expect(entries.first?["recordName"] as? String == "rome")
            #expect(entries.first?["deleted"] as? Bool == true)
            let defaultZone = try await alice.post(
                "private", "records/changes", #"{"zoneID":{"zoneName":"_defaultZone"}}"#)
            #expect(defaultZone.status == 400)
            #expect((defaultZone.json["reason"] as? String)?.contains("custom zones only") == true)
            let publicDatabase = try await alice.post(
                "public", "records/changes", #"{"zoneID":{"zoneName":"_defaultZone"}}"#)
            #expect(publicDatabase.status == 400)
        }
    }

    @Test("zones/changes answers with metaSyncToken and ignores a syncToken key, as the live service does")
    func zonesChanges() async throws {
        try await EmulatorHarness.withEmulator { base in
            let alice = try await RawUser(base, "alice@example.com")
            try await Self.seed(alice)
            let first = try await alice.post("private", "zones/changes", "{}")
            #expect(first.status == 200, "\(first.text)")
            let zones = (first.json["zones"] as? [[String: Any]] ?? []).compactMap {
                ($0["zoneID"] as? [String: Any])?["zoneName"] as? String
            }
            #expect(Set(zones).isSuperset(of: ["Trips", "Food"]))
            let meta = try #require(first.json["metaSyncToken"] as? String)
            #expect(first.json["syncToken"] == nil)
            _ = try await alice.post(
                "private", "zones/modify",
                #"{"operations":[{"operationType":"delete","zone":{"zoneID":{"zoneName":"Food"}}}]}"#)
            let since = try await alice.post("private", "zones/changes", #"{"metaSyncToken":"\#(meta)"}"#)
            let changed = since.json["zones"] as? [[String: Any]] ?? []
            #expect(changed.count == 1)
            #expect((changed.first?["zoneID"] as? [String: Any])?["zoneName"] as? String == "Food")
            #expect(changed.first?["deleted"] as? Bool == true)
            let ignored = try await alice.post("private", "zones/changes", #"{"syncToken":"\#(meta)"}"#)
            #expect((ignored.json["zones"] as? [Any])?.count ?? 0 >= 1, "a syncToken key reads from the start")
        }
    }

    @Test("changes/zone takes desiredKeys, desiredRecordTypes and reverse for all zones, and a zone's own keys win")
    func zoneChangesKeys() async throws {
        try await EmulatorHarness.withEmulator { base in
            let alice = try await RawUser(base, "alice@example.com")
            try await Self.seed(alice)
            let answer = try await alice.post(
                "private", "changes/zone",
                #"{"desiredRecordTypes":["Note"],"desiredKeys":["text"],"zones":[{"zoneID":{"zoneName":"Trips"}},"#
                    + #"{"zoneID":{"zoneName":"Food"},"desiredRecordTypes":["Stop"],"desiredKeys":["rank"],"reverse":true}]}"#
            )
            #expect(answer.status == 200, "\(answer.text)")
            let zones = answer.json["zones"] as? [[String: Any]] ?? []
            let trips = zones.first?["records"] as? [[String: Any]] ?? []
            #expect(trips.compactMap { $0["recordName"] as? String } == ["note"])
            #expect((trips.first?["fields"] as? [String: Any]).map { Array($0.keys) } == ["text"])
            let food = zones.last?["records"] as? [[String: Any]] ?? []
            #expect(food.compactMap { $0["recordName"] as? String } == ["bologna"])
            #expect((food.first?["fields"] as? [String: Any]).map { Array($0.keys) } == ["rank"])
            // reverse hands a page's changes out last first.
            func order(_ reverse: Bool) async throws -> [String] {
                let answer = try await alice.post(
                    "private", "changes/zone",
                    #"{"reverse":\#(reverse),"desiredRecordTypes":["Stop"],"zones":[{"zoneID":{"zoneName":"Trips"}}]}"#)
                let zone = (answer.json["zones"] as? [[String: Any]])?.first
                return (zone?["records"] as? [[String: Any]] ?? []).compactMap { $0["recordName"] as? String }
            }
            let forward = try await order(false)
            #expect(forward.count == 3)
            #expect(try await order(true) == forward.reversed())
        }
    }
}
