import CloudKitWire
import Foundation
import ShareKit
import SharelaneTestSupport
import Testing

/// `sharelane serve` checked key by key against the table of the reference's dictionaries kept in
/// Docs/Reference/Dictionaries.json: every operation of the catalogue is played over raw HTTP against a real
/// serve, in shapes that make its answer hold each of its dictionaries (saved records, shares, deletions,
/// per-entry errors), and each answer is checked against the endpoint's answer dictionary: every key the
/// reference always returns present, every key documented or marked as serve's own, each value of its type,
/// enum words from the documented sets, opaque strings base64, error codes from the reference's list.
@Suite(.serialized) struct ReferenceConformanceTests {
    typealias H = EmulatorHarness

    /// One request whose answer is checked: `{ALICE}`, `{BOB}`, `{SHORTGUID}` and `{APNSTOKEN}` in the body
    /// stand for the seeded world's.
    struct Example: Sendable, CustomTestStringConvertible {
        var path: String
        var database = "private"
        var method = "POST"
        var asBob = false
        var body: String?

        var testDescription: String { "\(method) \(database)/\(path)" }
    }

    static let lists = #"{"zoneName":"Lists"}"#
    static let trips = #"{"zoneName":"Trips"}"#

    static let examples: [Example] = [
        // A new record, a forced delete of a record that never was, and a create of one that is: a saved record,
        // a deletion and a per-record error in one answer.
        Example(
            path: "records/modify",
            body: #"{"zoneID":\#(lists),"operations":[{"operationType":"create","record":{"recordName":"eggs","#
                + #""recordType":"Todo","fields":{"title":{"value":"Eggs","type":"STRING"},"qty":{"value":12}}}},"#
                + #"{"operationType":"forceDelete","record":{"recordName":"never"}},"#
                + #"{"operationType":"create","record":{"recordName":"milk","recordType":"Todo","fields":{}}}]}"#),
        Example(
            path: "records/lookup",
            body: #"{"zoneID":\#(lists),"records":[{"recordName":"milk"},{"recordName":"pic"},{"recordName":"nope"}]}"#),
        Example(
            path: "records/query",
            body: #"{"zoneID":\#(lists),"resultsLimit":1,"query":{"recordType":"Todo","sortBy":[{"fieldName":"spot","#
                + #""relativeLocation":{"value":{"latitude":48.85,"longitude":2.35},"type":"LOCATION"}}]}}"#),
        Example(path: "records/changes", body: #"{"zoneID":\#(lists)}"#),
        Example(
            path: "records/resolve", database: "public", asBob: true,
            body: #"{"shortGUIDs":[{"value":"{SHORTGUID}","shouldFetchRootRecord":true},{"value":"nosuchguid"}]}"#),
        Example(
            path: "records/accept", database: "public", asBob: true,
            body: #"{"shortGUIDs":[{"value":"{SHORTGUID}","shouldFetchRootRecord":true},{"value":"nosuchguid"}]}"#),
        Example(path: "zones/list", method: "GET"),
        Example(path: "zones/lookup", body: #"{"zones":[\#(lists),{"zoneName":"Nope"}]}"#),
        Example(
            path: "zones/modify",
            body: #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"New"}}},"#
                + #"{"operationType":"delete","zone":{"zoneID":{"zoneName":"Nope"}}}]}"#),
        Example(path: "zones/changes", body: "{}"),
        Example(path: "changes/database", body: "{}"),
        Example(path: "changes/zone", body: #"{"zones":[{"zoneID":\#(lists)},{"zoneID":{"zoneName":"Nope"}}]}"#),
        Example(path: "users/current", database: "public", method: "GET"),
        Example(
            path: "users/lookup/email", database: "public",
            body: #"{"users":[{"emailAddress":"bob@example.com"},{"emailAddress":"nobody@example.com"}]}"#),
        Example(
            path: "users/lookup/phone", database: "public",
            body: #"{"users":[{"phoneNumber":"+15550100002"},{"phoneNumber":"+15550109999"}]}"#),
        Example(
            path: "users/lookup/id", database: "public",
            body: #"{"users":[{"userRecordName":"{BOB}"},{"userRecordName":"_nobody"}]}"#),
        Example(path: "users/lookup/contacts", database: "public", body: "{}"),
        Example(path: "users/caller", database: "public", method: "GET"),
        Example(
            path: "users/discover", database: "public",
            body: #"{"lookupInfos":[{"emailAddress":"bob@example.com"},{"emailAddress":"nobody@example.com"}]}"#),
        Example(path: "users/settings", database: "public", method: "GET"),
        Example(path: "subscriptions/list", method: "GET"),
        Example(
            path: "subscriptions/lookup",
            body: #"{"subscriptions":[{"subscriptionID":"lists"},{"subscriptionID":"nope"}]}"#),
        Example(
            path: "subscriptions/modify",
            body: #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"todos","#
                + #""subscriptionType":"query","query":{"recordType":"Todo"},"zoneID":\#(lists),"firesOn":["create"],"#
                + #""notificationInfo":{"alertBody":"new todo"}}},"#
                + #"{"operationType":"delete","subscription":{"subscriptionID":"lists","subscriptionType":"zone"}},"#
                + #"{"operationType":"delete","subscription":{"subscriptionID":"nope","subscriptionType":"zone"}}]}"#),
        Example(path: "tokens/create", body: #"{"apnsEnvironment":"development"}"#),
        Example(path: "tokens/register", body: #"{"apnsEnvironment":"development","apnsToken":"{APNSTOKEN}"}"#),
        Example(
            path: "assets/upload",
            body: #"{"zoneID":\#(lists),"tokens":[{"recordName":"milk","recordType":"Todo","fieldName":"photo"}]}"#),
        Example(
            path: "assets/rereference",
            body: #"{"zoneID":\#(lists),"assets":[{"recordName":"pic","fieldName":"photo"},"#
                + #"{"recordName":"milk","fieldName":"title"},{"recordName":"nope","fieldName":"photo"}]}"#),
        Example(path: "schema/lookup", database: "public", method: "GET"),
        Example(
            path: "schema/extend", database: "public",
            body:
                #"{"schema":{"recordTypes":[{"name":"Note","fields":[{"name":"text","type":"STRING","indexes":[]}]}]}}"#
        ),
        Example(path: "schema/deploy", database: "public", body: "{}"),
    ]

    @Test("the table names every operation serve routes, one example each, and the rendered table is in step")
    func theTableCoversTheCatalogue() throws {
        let table = try ReferenceTable.load()
        let served = Set(WireOperation.all.map(\.path))
        #expect(Set(table.endpoints.map(\.path)) == served)
        #expect(Set(Self.examples.map(\.path)) == served)
        #expect(table.endpoints.count == served.count, "one row per operation")
        for endpoint in table.endpoints {
            #expect(table.dictionary(endpoint.answer) != nil, "\(endpoint.path) answers \(endpoint.answer)")
            let codes = try #require(table.enumValues("serverErrorCode"))
            for code in endpoint.errors { #expect(codes.contains(code), "\(endpoint.path): \(code)") }
        }
        // Every type a key names is one the table has.
        for dictionary in table.dictionaries {
            for key in dictionary.keys {
                for part in key.type.split(separator: ":").map(String.init) where part.first?.isUppercase == true {
                    #expect(table.dictionary(part) != nil, "\(dictionary.name).\(key.key) names \(part)")
                }
            }
        }
        try GoldenFile(besides: #filePath, folder: "../../Docs/Reference").check(
            table.markdown(), against: "Dictionaries.md")
        // Docs/CloudKit.md says what a strict client can rely on, endpoint by endpoint, as the table does.
        let docs = try String(
            contentsOf: ReferenceTable.folder.deletingLastPathComponent().appendingPathComponent("CloudKit.md"),
            encoding: .utf8)
        for endpoint in table.endpoints {
            let row =
                "| [`\(endpoint.path)`](Reference/Dictionaries.md#\(ReferenceTable.anchor(endpoint.path))) | "
                + "\(endpoint.strict) |"
            #expect(docs.contains(row), "Docs/CloudKit.md lacks the strict-client row of \(endpoint.path)")
        }
    }

    @Test("the reference's types chapter is in the table whole")
    func theTypesChapterIsWhole() throws {
        let table = try ReferenceTable.load()
        // The chapter's dictionaries, by title, and the keys each documents.
        let chapter: [String: [String]] = [
            "Asset Dictionary": ["fileChecksum", "size", "referenceChecksum", "wrappingKey", "receipt", "downloadURL"],
            "Filter Dictionary": ["comparator", "fieldName", "fieldValue", "distance"],
            "Location Dictionary": [
                "latitude", "longitude", "horizontalAccuracy", "verticalAccuracy", "altitude", "speed", "course",
                "timestamp",
            ],
            "Name Components Dictionary": [
                "namePrefix", "givenName", "familyName", "nickname", "nameSuffix", "middleName",
                "phoneticRepresentation",
            ],
            "Notification Info Dictionary": [
                "alertBody", "alertLocalizationKey", "alertLocalizationArgs", "alertActionLocalizationKey",
                "alertLaunchImage", "soundName", "shouldBadge", "shouldSendContentAvailable",
            ],
            "Query Dictionary": ["recordType", "filterBy", "sortBy"],
            "Record Dictionary": [
                "recordName", "recordType", "recordChangeTag", "fields", "createShortGUID", "parent", "forRecord",
                "publicPermission", "participants", "created", "modified", "deleted", "shortGUID", "share", "owner",
                "currentUserParticipant",
            ],
            "Record Field Dictionary": ["value", "type"],
            "Reference Dictionary": ["recordName", "zoneID", "action"],
            "Share Participant Dictionary": ["userIdentity", "permission", "type", "acceptanceStatus"],
            "ShortGUID Dictionary": ["value", "shouldFetchRootRecord", "rootRecordDesiredKeys"],
            "ShortGUID Result Dictionary": [
                "containerIdentifier", "databaseScope", "rootRecordName", "ownerIdentity", "environment", "rootRecord",
                "zoneID", "share", "shortGUID", "potentialMatchList", "participantPermission", "participantStatus",
                "participantType", "webpageURL",
            ],
            "ShortGUID Fetch Error Dictionary": ["reason", "retryAfter", "serverErrorCode"],
            "Sort Descriptor Dictionary": ["fieldName", "ascending", "relativeLocation"],
            "Subscription Dictionary": [
                "zoneID", "subscriptionID", "subscriptionType", "query", "firesOn", "firesOnce", "notificationInfo",
                "zoneWide",
            ],
            "User Dictionary": ["userRecordName", "firstName", "lastName", "emailAddress"],
            "User Identity Dictionary": ["lookupInfo", "userRecordName", "nameComponents"],
            "User Identity Lookup Information Dictionary": ["emailAddress", "phoneNumber", "userRecordName"],
            "Zone Dictionary": ["zoneID", "syncToken", "atomic"],
            "Zone ID Dictionary": ["zoneName", "ownerRecordName"],
        ]
        for (title, keys) in chapter {
            let dictionary = try #require(table.dictionaries.first { $0.title == title }, "no \(title)")
            for key in keys {
                let entry = dictionary.keys.first { $0.key == key }
                #expect(entry != nil, "\(title) lacks \(key)")
                #expect(entry?.serve == nil, "\(title).\(key) is the reference's, not serve's own")
            }
        }
        // Created and modified are dictionaries of their own in the table.
        #expect(table.dictionary("Stamp")?.keys.map(\.key) == ["timestamp", "userRecordName", "deviceID"])
    }

    @Test("each answer holds the reference's dictionaries key by key", arguments: examples)
    func answerConforms(_ example: Example) async throws {
        let table = try ReferenceTable.load()
        let endpoint = try #require(table.endpoint(example.path))
        try await H.withEmulator { base in
            let world = try await Self.seed(base)
            let answer = try await Self.send(example, world: world, base: base)
            #expect(answer.status == 200, "\(answer.text)")
            let json = try JSONValue.parse(answer.text)
            let problems = table.problems(json, as: "dict:" + endpoint.answer, at: example.path)
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))\n\(answer.text)")
            // Per-entry refusals carry documented codes, and codes this endpoint documents.
            for code in Self.errorCodes(in: json) {
                #expect(endpoint.errors.contains(code), "\(example.path) answered \(code), not in its row")
            }
        }
    }

    @Test(
        "a refused request answers the error dictionary with a documented code, and a signed-out one a redirectURL",
        arguments: examples.filter { $0.method == "POST" })
    func refusalsConform(_ example: Example) async throws {
        let table = try ReferenceTable.load()
        let endpoint = try #require(table.endpoint(example.path))
        try await H.withEmulator { base in
            let world = try await Self.seed(base)
            var malformed = example
            malformed.body = #"{"zones": "#
            let answer = try await Self.send(malformed, world: world, base: base)
            #expect(answer.status == 400, "\(answer.text)")
            let json = try JSONValue.parse(answer.text)
            let problems = table.problems(json, as: "dict:Error", at: example.path)
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))\n\(answer.text)")
            #expect(json["serverErrorCode"] == .string("BAD_REQUEST"))
            #expect(endpoint.errors.contains("BAD_REQUEST"), "\(example.path)'s row lists BAD_REQUEST")
        }
    }

    @Test("a request that needs a user, sent without one, answers AUTHENTICATION_REQUIRED with a redirectURL")
    func signedOutConforms() async throws {
        let table = try ReferenceTable.load()
        try await H.withEmulator { base in
            let answer = try await H.raw(
                base, H.databasePath("public", "users/caller"), query: ["ckAPIToken": H.apiToken], method: "GET")
            #expect(answer.status == 421)
            let json = try JSONValue.parse(answer.text)
            #expect(table.problems(json, as: "dict:Error", at: "users/caller").isEmpty, "\(answer.text)")
            #expect(json["redirectURL"]?.string != nil)
        }
    }

    // MARK: - The world the examples meet

    struct World: Sendable {
        var bob: String
        var aliceToken: String
        var bobToken: String
        var shortGUID: String
    }

    /// Alice (discoverable, a phone number) with a zone `Lists` holding `milk` (a title, a quantity and a
    /// place), `pic` (an uploaded asset) and a deleted record, a zone subscription `lists`, and a zone `Trips`
    /// whose record `trip` roots a share to Bob (discoverable, a phone number), who has not accepted it.
    static func seed(_ base: String) async throws -> World {
        let (aliceToken, _) = try await H.signIn(base, "alice@example.com")
        let (bobToken, bob) = try await H.signIn(base, "bob@example.com")
        func call(_ database: String, _ path: String, _ body: String, token: String? = nil) async throws
            -> H.Answer
        {
            let answer = try await H.raw(
                base, H.databasePath(database, path),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token ?? aliceToken], body: body)
            #expect(answer.status == 200 && !answer.text.contains("serverErrorCode"), "\(path): \(answer.text)")
            return answer
        }
        for (token, phone) in [(aliceToken, "+15550100001"), (bobToken, "+15550100002")] {
            _ = try await call(
                "public", "users/settings", #"{"phoneNumber":"\#(phone)","discoverable":true}"#, token: token)
        }
        // Development creates a LOCATION field without indexes, as CloudKit does: index it to sort by it.
        _ = try await call(
            "public", "schema/extend",
            #"{"schema":{"recordTypes":[{"name":"Todo","fields":[{"name":"spot","type":"LOCATION","#
                + #""indexes":["QUERYABLE","SORTABLE"]}]}]}}"#)
        _ = try await call(
            "private", "zones/modify",
            #"{"operations":[{"operationType":"create","zone":{"zoneID":\#(lists)}},"#
                + #"{"operationType":"create","zone":{"zoneID":\#(trips)}}]}"#)
        let upload = try await call(
            "private", "assets/upload",
            #"{"zoneID":\#(lists),"tokens":[{"recordName":"pic","recordType":"Todo","fieldName":"photo"}]}"#)
        let url = try #require(upload.json["tokens"].flatMap { ($0 as? [[String: Any]])?.first?["url"] as? String })
        let uploaded = try await AssetWireTests.http(url, method: "POST", bytes: Array("picture bytes".utf8))
        let singleFile = try #require(uploaded.json["singleFile"] as? [String: Any])
        let asset = String(decoding: try JSONSerialization.data(withJSONObject: singleFile), as: UTF8.self)
        _ = try await call(
            "private", "records/modify",
            #"{"zoneID":\#(lists),"operations":[{"operationType":"create","record":{"recordName":"milk","#
                + #""recordType":"Todo","fields":{"title":{"value":"Milk","type":"STRING"},"qty":{"value":2,"type":"INT64"},"#
                + #""spot":{"value":{"latitude":48.86,"longitude":2.34},"type":"LOCATION"}}}},"#
                + #"{"operationType":"create","record":{"recordName":"pic","recordType":"Todo","fields":{"#
                + #""title":{"value":"Pic","type":"STRING"},"spot":{"value":{"latitude":40.7,"longitude":-74.0},"#
                + #""type":"LOCATION"},"photo":{"value":\#(asset),"type":"ASSETID"}}}},"#
                + #"{"operationType":"create","record":{"recordName":"old","recordType":"Todo","fields":{}}}]}"#)
        _ = try await call(
            "private", "records/modify",
            #"{"zoneID":\#(lists),"operations":[{"operationType":"forceDelete","record":{"recordName":"old"}}]}"#)
        _ = try await call(
            "private", "subscriptions/modify",
            #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"lists","#
                + #""subscriptionType":"zone","zoneID":\#(lists)}}]}"#)
        let shared = try await call(
            "private", "records/modify",
            #"{"zoneID":\#(trips),"operations":[{"operationType":"create","record":{"recordName":"trip","#
                + #""recordType":"Trip","fields":{"name":{"value":"Lisbon","type":"STRING"}}}},"#
                + #"{"operationType":"create","record":{"recordType":"cloudkit.share","forRecord":{"recordName":"trip"},"#
                + #""publicPermission":"NONE","participants":[{"userIdentity":{"lookupInfo":{"emailAddress":"bob@example.com"}},"#
                + #""permission":"READ_WRITE","type":"USER","acceptanceStatus":"UNKNOWN"}]}}]}"#)
        let records = shared.json["records"] as? [[String: Any]] ?? []
        let shortGUID = try #require(records.compactMap { $0["shortGUID"] as? String }.first, "\(shared.text)")
        return World(bob: bob, aliceToken: aliceToken, bobToken: bobToken, shortGUID: shortGUID)
    }

    static func send(_ example: Example, world: World, base: String) async throws -> H.Answer {
        var body = example.body?
            .replacingOccurrences(of: "{BOB}", with: world.bob)
            .replacingOccurrences(of: "{SHORTGUID}", with: world.shortGUID)
        if body?.contains("{APNSTOKEN}") == true {
            let created = try await H.raw(
                base, H.databasePath("private", "tokens/create"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": world.aliceToken],
                body: #"{"apnsEnvironment":"development"}"#)
            body = body?.replacingOccurrences(of: "{APNSTOKEN}", with: created.json["apnsToken"] as? String ?? "")
        }
        return try await H.raw(
            base, H.databasePath(example.database, example.path),
            query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": example.asBob ? world.bobToken : world.aliceToken],
            body: body, method: example.method)
    }

    /// Every `serverErrorCode` anywhere in an answer.
    static func errorCodes(in value: JSONValue) -> [String] {
        switch value {
        case .object(let members):
            return (members["serverErrorCode"]?.string.map { [$0] } ?? [])
                + members.sorted { $0.key < $1.key }.flatMap {
                    $0.key == "serverErrorCode" ? [] : errorCodes(in: $0.value)
                }
        case .array(let elements): return elements.flatMap(errorCodes(in:))
        default: return []
        }
    }
}
