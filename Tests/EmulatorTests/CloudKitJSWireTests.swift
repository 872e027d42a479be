import CloudKitWire
import Crypto
import Foundation
import ShareKit
import Testing

/// `sharelane serve` answers requests shaped as Apple's CloudKit JS 2.4.0 sends them: its query parameters
/// (`ckjsBuildVersion`, `ckjsVersion`, `clientId`), bodies as `content-type: text/plain`, values without a
/// `type`, an upload's `singleFile` saved as it came, a share saved before its root, and a browser page on
/// another origin. No Apple code runs here: each request is what CloudKit JS puts on the wire
/// (Scripts/cloudkitjs-check.sh runs the real client, for whoever has a copy).
@Suite("CloudKit JS on the wire")
struct CloudKitJSWireTests {
    typealias H = EmulatorHarness

    /// The parameters CloudKit JS adds to every request.
    static let clientParameters = [
        "ckjsBuildVersion": "1811ProjectDev27", "ckjsVersion": "2.4.0",
        "clientId": "4f7c3b52-0d6e-4bd2-9c3a-1e2b8a6d9f10",
    ]

    /// A request as CloudKit JS sends it: its parameters, the user's tokens, a text/plain body.
    static func send(
        _ base: String, _ database: String, _ operation: String, body: String? = nil, token: String?,
        method: String = "POST", headers: [(name: String, value: String)] = []
    ) async throws -> H.Answer {
        var query = clientParameters
        query["ckAPIToken"] = H.apiToken
        if let token { query["ckWebAuthToken"] = token }
        return try await H.raw(
            base, H.databasePath(database, operation), query: query, body: body, method: method, headers: headers,
            contentType: "text/plain")
    }

    static func records(_ answer: H.Answer) -> [[String: Any]] {
        answer.json["records"] as? [[String: Any]] ?? []
    }

    static func field(_ record: [String: Any]?, _ name: String) -> [String: Any]? {
        (record?["fields"] as? [String: Any])?[name] as? [String: Any]
    }

    static let zone = #""zoneID": {"zoneName": "Lists"}"#

    static func makeZone(_ base: String, token: String) async throws {
        let answer = try await send(
            base, "private", "zones/modify",
            body: #"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Lists"}}}]}"#,
            token: token)
        #expect(answer.status == 200, "\(answer.text)")
    }

    // MARK: - Server-to-server

    @Test("a server-to-server signature over the path and query as CloudKit JS sends it is accepted")
    func signatureOverPathAndQuery() async throws {
        let key = P256.Signing.PrivateKey()
        let signer = try RequestSigner(keyID: "js-key", pem: key.pemRepresentation)
        var keyring = ServerKeyring()
        try keyring.add(keyID: "js-key", pem: key.publicKey.pemRepresentation)
        try await H.withEmulator(serverKeys: keyring) { base in
            let path = H.databasePath("public", "records/modify")
            let body =
                #"{"operations": [{"operationType": "create", "record": {"recordType": "Card", "recordName": "c1", "#
                + #""fields": {"name": {"value": "Server"}}}}]}"#
            // The target as sent: H.raw writes the query sorted and percent-encoded, and so is it signed here.
            let query = Self.clientParameters.sorted { $0.key < $1.key }.map {
                "\($0.key)=\(H.percentEncoded($0.value))"
            }
            .joined(separator: "&")
            func signed(_ subpath: String, _ body: String) throws -> [(name: String, value: String)] {
                try signer.headers(date: Date(), body: Data(body.utf8), subpath: subpath)
            }
            var answer = try await H.raw(
                base, path, query: Self.clientParameters, body: body, headers: try signed(path + "?" + query, body),
                contentType: "text/plain")
            #expect(answer.status == 200, "\(answer.text)")
            #expect(Self.records(answer).first?["recordName"] as? String == "c1")

            // The path alone, when a query was sent, is not what was sent.
            let other = body.replacingOccurrences(of: "c1", with: "c2")
            answer = try await H.raw(
                base, path, query: Self.clientParameters, body: other, headers: try signed(path, other),
                contentType: "text/plain")
            #expect(answer.status == 401, "\(answer.text)")
            #expect(answer.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")

            // A client that sends no query signs the path, as before.
            answer = try await H.raw(base, path, body: other, headers: try signed(path, other))
            #expect(answer.status == 200, "\(answer.text)")

            // CloudKit JS asks who the key is when it sets the key's container up.
            let callerPath = H.databasePath("public", "users/caller")
            answer = try await H.raw(base, callerPath, method: "GET", headers: try signed(callerPath, ""))
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.json["userRecordName"] as? String == AccessRules.serverKeyCaller(keyID: "js-key"))
        }
    }

    // MARK: - Values without a type

    @Test("a whole number sent without a type is a DOUBLE field's number; an explicit INT64 or a fraction is refused")
    func numbersWithoutType() async throws {
        try await H.withEmulator { base in
            let alice = try await H.signIn(base, "alice@example.com")
            try await Self.makeZone(base, token: alice.token)
            func save(_ name: String, _ fields: String) async throws -> [String: Any]? {
                let answer = try await Self.send(
                    base, "private", "records/modify",
                    body: #"{"operations": [{"operationType": "create", "record": {"recordType": "Item", "#
                        + #""recordName": "\#(name)", "fields": \#(fields)}}], \#(Self.zone)}"#,
                    token: alice.token)
                #expect(answer.status == 200, "\(answer.text)")
                return Self.records(answer).first
            }
            // The field is made DOUBLE; then 2, with no type, is 2.0.
            _ = try await save("milk", #"{"price": {"value": 2.5}, "count": {"value": 1}}"#)
            let eggs = try await save("eggs", #"{"price": {"value": 2}}"#)
            #expect(Self.field(eggs, "price")?["type"] as? String == "DOUBLE", "\(eggs ?? [:])")
            #expect(Self.field(eggs, "price")?["value"] as? Double == 2)
            // Within one request: the first operation makes the field, the second's whole number follows it.
            let both = try await Self.send(
                base, "private", "records/modify",
                body: #"{"operations": ["#
                    + #"{"operationType": "create", "record": {"recordType": "Trip", "recordName": "t1", "#
                    + #""fields": {"km": {"value": 0.5}}}}, "#
                    + #"{"operationType": "create", "record": {"recordType": "Trip", "recordName": "t2", "#
                    + #""fields": {"km": {"value": 40}}}}], \#(Self.zone)}"#,
                token: alice.token)
            #expect(Self.field(Self.records(both).last, "km")?["type"] as? String == "DOUBLE", "\(both.text)")

            // Refused as CloudKit refuses them: an explicit INT64 for the DOUBLE field, a fraction for INT64.
            for (name, fields) in [
                ("bread", #"{"price": {"value": 2, "type": "INT64"}}"#), ("butter", #"{"count": {"value": 1.5}}"#),
            ] {
                let refused = try await save(name, fields)
                #expect(refused?["serverErrorCode"] as? String == "BAD_REQUEST", "\(name): \(refused ?? [:])")
                #expect((refused?["reason"] as? String)?.contains("invalid attempt to set value type") == true)
            }
            let lookup = try await Self.send(
                base, "private", "records/lookup",
                body: #"{"records": [{"recordName": "bread"}, {"recordName": "butter"}], \#(Self.zone)}"#,
                token: alice.token)
            #expect(Self.records(lookup).map { $0["serverErrorCode"] as? String } == ["NOT_FOUND", "NOT_FOUND"])
        }
    }

    // MARK: - Assets

    @Test("an upload answers singleFile as Apple does, and the dictionary saved without a type is the asset")
    func assetSavedAsUploaded() async throws {
        try await H.withEmulator { base in
            let alice = try await H.signIn(base, "alice@example.com")
            try await Self.makeZone(base, token: alice.token)
            let tokens = try await Self.send(
                base, "private", "assets/upload",
                body: #"{"tokens": [{"recordType": "Photo", "recordName": "receipt", "fieldName": "image"}], "#
                    + #"\#(Self.zone)}"#,
                token: alice.token)
            let url = try #require((tokens.json["tokens"] as? [[String: Any]])?.first?["url"] as? String)
            let path = try #require(URLComponents(string: url)).path
            let ticket = try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "ticket" }?.value)
            let upload = try await H.raw(
                base, path, query: ["ticket": ticket], body: "receipt bytes", contentType: "application/octet-stream")
            let singleFile = try #require(upload.json["singleFile"] as? [String: Any], "\(upload.text)")
            for key in ["wrappingKey", "fileChecksum", "receipt", "referenceChecksum", "size"] {
                #expect(singleFile[key] != nil, "singleFile lacks \(key): \(upload.text)")
            }
            let dictionary = String(
                decoding: try JSONSerialization.data(withJSONObject: singleFile, options: [.sortedKeys]), as: UTF8.self)
            let saved = try await Self.send(
                base, "private", "records/modify",
                body: #"{"operations": [{"operationType": "create", "record": {"recordType": "Photo", "#
                    + #""recordName": "receipt", "fields": {"image": {"value": \#(dictionary)}}}}], \#(Self.zone)}"#,
                token: alice.token)
            let image = Self.field(Self.records(saved).first, "image")
            #expect(image?["type"] as? String == "ASSETID", "\(saved.text)")
            let download = try #require((image?["value"] as? [String: Any])?["downloadURL"] as? String)
            // The whole URL, its query included: that is what makes it good (CloudKit JS fetches it as given).
            let bytes = try await AssetWireTests.http(
                download.replacingOccurrences(of: "${f}", with: "r.txt"), method: "GET")
            #expect(String(decoding: bytes.bytes, as: UTF8.self) == "receipt bytes")
        }
    }

    // MARK: - Shares

    @Test("a share saved before its root in one request, the root with the tag the client read, saves both")
    func shareBeforeRoot() async throws {
        try await H.withEmulator { base in
            let alice = try await H.signIn(base, "alice@example.com")
            try await Self.makeZone(base, token: alice.token)
            let created = try await Self.send(
                base, "private", "records/modify",
                body: #"{"operations": [{"operationType": "create", "record": {"recordType": "Trip", "#
                    + #""recordName": "italy", "fields": {"name": {"value": "Italy"}}}}], \#(Self.zone)}"#,
                token: alice.token)
            let tag = try #require(Self.records(created).first?["recordChangeTag"] as? String)
            let share =
                #"{"operationType": "create", "record": {"recordType": "cloudkit.share", "recordName": "italy-share", "#
                + #""forRecord": {"recordName": "italy", "recordChangeTag": "\#(tag)"}, "publicPermission": "NONE", "#
                + #""participants": [{"userIdentity": {"lookupInfo": {"emailAddress": "bob@example.com"}}, "#
                + #""permission": "READ_ONLY", "type": "USER", "acceptanceStatus": "INVITED"}]}}"#
            let root =
                #"{"operationType": "update", "record": {"recordType": "Trip", "recordName": "italy", "#
                + #""recordChangeTag": "\#(tag)", "fields": {"name": {"value": "Italy 2025"}}, "#
                + #""share": {"recordName": "italy-share"}}}"#
            let answer = try await Self.send(
                base, "private", "records/modify",
                body: #"{"operations": [\#(share), \#(root)], "atomic": true, \#(Self.zone)}"#, token: alice.token)
            let saved = Self.records(answer)
            #expect(saved.count == 2, "\(answer.text)")
            #expect(saved.allSatisfy { $0["serverErrorCode"] == nil }, "\(answer.text)")
            #expect(Self.field(saved.last, "name")?["value"] as? String == "Italy 2025")
            #expect((saved.last?["share"] as? [String: Any])?["recordName"] as? String == "italy-share")

            // The tag the client read is good once: sent again, it is stale.
            let again = try await Self.send(
                base, "private", "records/modify", body: #"{"operations": [\#(root)], \#(Self.zone)}"#,
                token: alice.token)
            #expect(Self.records(again).first?["serverErrorCode"] as? String == "CONFLICT", "\(again.text)")
        }
    }

    @Test("a share lists its owner among its participants, and a share sent back with that entry keeps its invitees")
    func ownerAmongParticipants() async throws {
        try await H.withEmulator { base in
            let alice = try await H.signIn(base, "alice@example.com")
            try await Self.makeZone(base, token: alice.token)
            let created = try await Self.send(
                base, "private", "records/modify",
                body: #"{"operations": [{"operationType": "create", "record": {"recordType": "cloudkit.share", "#
                    + #""recordName": "cloudkit.zoneshare", "publicPermission": "NONE", "participants": [{"#
                    + #""userIdentity": {"lookupInfo": {"emailAddress": "bob@example.com"}}, "permission": "READ_WRITE", "#
                    + #""type": "USER", "acceptanceStatus": "INVITED"}]}}], \#(Self.zone)}"#,
                token: alice.token)
            let share = try #require(Self.records(created).first, "\(created.text)")
            let participants = try #require(share["participants"] as? [[String: Any]], "\(created.text)")
            #expect(participants.count == 2)
            let owner = try #require(participants.first)
            #expect(owner["type"] as? String == "OWNER")
            #expect(owner["acceptanceStatus"] as? String == "ACCEPTED")
            #expect(owner["permission"] as? String == "READ_WRITE")
            #expect((owner["userIdentity"] as? [String: Any])?["userRecordName"] as? String == alice.user)
            #expect(participants.last?["type"] as? String == "USER")

            // Sent back as read (what CloudKit JS does to change a share), the owner is not made an invitee.
            var edited = share
            edited["fields"] = ["cloudkit.title": ["value": "Groceries"]]
            let record = String(
                decoding: try JSONSerialization.data(withJSONObject: edited, options: [.sortedKeys]), as: UTF8.self)
            let updated = try await Self.send(
                base, "private", "records/modify",
                body: #"{"operations": [{"operationType": "update", "record": \#(record)}], \#(Self.zone)}"#,
                token: alice.token)
            let after = try #require(
                Self.records(updated).first?["participants"] as? [[String: Any]], "\(updated.text)")
            #expect(after.map { $0["type"] as? String } == ["OWNER", "USER"])
        }
    }

    @Test("a delete that names a share by its name alone: the participant leaves it, the owner stops sharing")
    func deleteShareByName() async throws {
        try await H.withEmulator { base in
            let alice = try await H.signIn(base, "alice@example.com")
            let bob = try await H.signIn(base, "bob@example.com")
            try await Self.makeZone(base, token: alice.token)
            let created = try await Self.send(
                base, "private", "records/modify",
                body: #"{"operations": ["#
                    + #"{"operationType": "create", "record": {"recordType": "Trip", "recordName": "italy"}}, "#
                    + #"{"operationType": "create", "record": {"recordType": "cloudkit.share", "recordName": "s", "#
                    + #""forRecord": {"recordName": "italy"}, "participants": [{"userIdentity": {"lookupInfo": "#
                    + #"{"emailAddress": "bob@example.com"}}, "permission": "READ_ONLY"}]}}], \#(Self.zone)}"#,
                token: alice.token)
            let share = try #require(Self.records(created).last, "\(created.text)")
            let guid = try #require(share["shortGUID"] as? String)
            _ = try await Self.send(
                base, "public", "records/accept", body: #"{"shortGUIDs": [{"value": "\#(guid)"}]}"#, token: bob.token)
            // What CloudKit JS's deleteRecords sends: the name, no type.
            let shared = #""zoneID": {"zoneName": "Lists", "ownerRecordName": "\#(alice.user)"}"#
            let left = try await Self.send(
                base, "shared", "records/modify",
                body: #"{"operations": [{"operationType": "forceDelete", "record": {"recordName": "s"}}], \#(shared)}"#,
                token: bob.token)
            #expect(Self.records(left).first?["deleted"] as? Bool == true, "\(left.text)")
            let zones = try await Self.send(base, "shared", "zones/list", token: bob.token, method: "GET")
            #expect((zones.json["zones"] as? [[String: Any]])?.isEmpty == true, "\(zones.text)")
            // The share is still the owner's, without Bob; the owner deletes it by name, with its tag.
            let lookup = try await Self.send(
                base, "private", "records/lookup", body: #"{"records": [{"recordName": "s"}], \#(Self.zone)}"#,
                token: alice.token)
            let kept = try #require(Self.records(lookup).first)
            #expect(kept["recordType"] as? String == "cloudkit.share", "\(lookup.text)")
            let tag = try #require(kept["recordChangeTag"] as? String)
            let stopped = try await Self.send(
                base, "private", "records/modify",
                body: #"{"operations": [{"operationType": "delete", "record": {"recordName": "s", "#
                    + #""recordChangeTag": "\#(tag)"}}], \#(Self.zone)}"#,
                token: alice.token)
            #expect(Self.records(stopped).first?["deleted"] as? Bool == true, "\(stopped.text)")
            let root = try await Self.send(
                base, "private", "records/lookup", body: #"{"records": [{"recordName": "italy"}], \#(Self.zone)}"#,
                token: alice.token)
            #expect(Self.records(root).first?["share"] == nil, "\(root.text)")
        }
    }

    // MARK: - Refusals

    @Test("a refusal tells a stranger nothing: a record or zone kept from them answers as a missing one")
    func refusalsTellNothing() async throws {
        try await H.withEmulator { base in
            let alice = try await H.signIn(base, "alice@example.com")
            let bob = try await H.signIn(base, "bob@example.com")
            let carol = try await H.signIn(base, "carol@example.com")
            for zone in ["Trips", "Private"] {
                _ = try await Self.send(
                    base, "private", "zones/modify",
                    body:
                        #"{"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "\#(zone)"}}}]}"#,
                    token: alice.token)
            }
            let created = try await Self.send(
                base, "private", "records/modify",
                body: #"{"operations": ["#
                    + #"{"operationType": "create", "record": {"recordType": "Trip", "recordName": "italy"}}, "#
                    + #"{"operationType": "create", "record": {"recordType": "Trip", "recordName": "hotel", "#
                    + #""parent": {"recordName": "italy"}}}, "#
                    + #"{"operationType": "create", "record": {"recordType": "Trip", "recordName": "other"}}, "#
                    + #"{"operationType": "create", "record": {"recordType": "cloudkit.share", "recordName": "s", "#
                    + #""forRecord": {"recordName": "italy"}, "participants": [{"userIdentity": {"lookupInfo": "#
                    + #"{"emailAddress": "bob@example.com"}}, "permission": "READ_ONLY"}]}}], "#
                    + #""zoneID": {"zoneName": "Trips"}}"#,
                token: alice.token)
            let guid = try #require(Self.records(created).last?["shortGUID"] as? String, "\(created.text)")
            let accepted = try await Self.send(
                base, "public", "records/accept", body: #"{"shortGUIDs": [{"value": "\#(guid)"}]}"#, token: bob.token)
            #expect(accepted.status == 200, "\(accepted.text)")

            // Bob, in the zone he shares a hierarchy of: a record outside it reads as one that does not exist.
            let lookup = try await Self.send(
                base, "shared", "records/lookup",
                body: #"{"records": [{"recordName": "other"}, {"recordName": "ghost"}, {"recordName": "hotel"}], "#
                    + #""zoneID": {"zoneName": "Trips", "ownerRecordName": "\#(alice.user)"}}"#,
                token: bob.token)
            let answers = Self.records(lookup)
            #expect(answers.map { $0["serverErrorCode"] as? String } == ["NOT_FOUND", "NOT_FOUND", nil])
            let reasons = answers.prefix(2).map { ($0["reason"] as? String) ?? "" }
            #expect(reasons[0].replacingOccurrences(of: "other", with: "ghost") == reasons[1], "\(reasons)")

            // Carol, shared nothing: Alice's zone reads as a zone that does not exist, lookup and query alike.
            for operation in ["records/lookup", "records/query"] {
                var seen: [(status: Int, code: String?, reason: String)] = []
                for zone in ["Private", "NoSuchZone"] {
                    let body =
                        operation == "records/lookup"
                        ? #"{"records": [{"recordName": "milk"}], "#
                        : #"{"query": {"recordType": "Trip"}, "#
                    let answer = try await Self.send(
                        base, "shared", operation,
                        body: body + #""zoneID": {"zoneName": "\#(zone)", "ownerRecordName": "\#(alice.user)"}}"#,
                        token: carol.token)
                    let refusal = Self.records(answer).first ?? answer.json
                    seen.append(
                        (
                            answer.status, refusal["serverErrorCode"] as? String,
                            ((refusal["reason"] as? String) ?? "").replacingOccurrences(of: zone, with: "ZONE")
                        ))
                }
                #expect(seen[0].code == "ZONE_NOT_FOUND", "\(operation): \(seen)")
                #expect(seen[0].status == seen[1].status, "\(operation): \(seen)")
                #expect(seen[0].code == seen[1].code, "\(operation): \(seen)")
                #expect(seen[0].reason == seen[1].reason, "\(operation): \(seen)")
            }
        }
    }

    // MARK: - Development's default indexes

    @Test("a LOCATION field is queried by distance and sorted by it before any schema is written")
    func locationQueryableInDevelopment() async throws {
        try await H.withEmulator { base in
            let alice = try await H.signIn(base, "alice@example.com")
            try await Self.makeZone(base, token: alice.token)
            _ = try await Self.send(
                base, "private", "records/modify",
                body: #"{"operations": ["#
                    + #"{"operationType": "create", "record": {"recordType": "Place", "recordName": "rome", "#
                    + #""fields": {"where": {"value": {"latitude": 41.9, "longitude": 12.5}}}}}, "#
                    + #"{"operationType": "create", "record": {"recordType": "Place", "recordName": "oslo", "#
                    + #""fields": {"where": {"value": {"latitude": 59.9, "longitude": 10.7}}}}}], \#(Self.zone)}"#,
                token: alice.token)
            let here = #"{"value": {"latitude": 41.89, "longitude": 12.49}}"#
            let near = try await Self.send(
                base, "private", "records/query",
                body: #"{"query": {"recordType": "Place", "filterBy": [{"fieldName": "where", "comparator": "NEAR", "#
                    + #""fieldValue": \#(here), "distance": 100000}]}, \#(Self.zone)}"#,
                token: alice.token)
            #expect(Self.records(near).map { $0["recordName"] as? String } == ["rome"], "\(near.text)")
            let sorted = try await Self.send(
                base, "private", "records/query",
                body: #"{"query": {"recordType": "Place", "sortBy": [{"fieldName": "where", "#
                    + #""relativeLocation": {"latitude": 41.89, "longitude": 12.49}}]}, \#(Self.zone)}"#,
                token: alice.token)
            #expect(Self.records(sorted).map { $0["recordName"] as? String } == ["rome", "oslo"], "\(sorted.text)")
        }
    }
}
