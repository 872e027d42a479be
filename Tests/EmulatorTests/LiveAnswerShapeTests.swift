import CloudKitWire
import Foundation
import Parity
import ShareKit
import Testing

/// The shapes of `serve`'s answers where published captures of Apple's live service show them (shared/CLOUDKIT.md,
/// "What the live service answers"): a non-atomic batch answering a bad operation in its place, the keys every
/// record carries, and the `records/resolve` result. Requests are sent as a client sends them; answers are
/// checked key by key.
@Suite(.serialized)
struct LiveAnswerShapeTests {
    typealias H = EmulatorHarness
    typealias Client = LiveAnswerTests.Client

    /// An asset value whose receipt this server never handed out.
    static let unknownUpload =
        #"{"fileChecksum":"fnv1a64:0123456789abcdef","receipt":"serve-fnv1a64:0123456789abcdef","size":3}"#
    /// An asset value whose receipt does not match its checksum.
    static let mismatchedReceipt =
        #"{"fileChecksum":"fnv1a64:0123456789abcdef","receipt":"serve-fnv1a64:fedcba9876543210","size":3}"#

    static func create(_ name: String, asset: String? = nil) -> String {
        let photo = asset.map { #","photo":{"value":\#($0),"type":"ASSETID"}"# } ?? ""
        return #"{"operationType":"create","record":{"recordName":"\#(name)","recordType":"Card","#
            + #""fields":{"title":{"value":"\#(name)"}\#(photo)}}}"#
    }

    static func entries(_ answer: H.Answer) -> [[String: Any]] { answer.json["records"] as? [[String: Any]] ?? [] }

    // MARK: A bad operation in a non-atomic batch

    @Test(
        "a create whose asset receipt does not validate is refused in its place, BAD_REQUEST 'bad upload receipt (did_not_validate)', and the other creates are saved"
    )
    func aBadReceiptIsRefusedInItsPlace() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            let body = LiveAnswerTests.modify(
                Self.create("before"), Self.create("forged", asset: Self.unknownUpload),
                Self.create("tampered", asset: Self.mismatchedReceipt), Self.create("after"))
            let answer = try await alice.post("public", "records/modify", body)
            #expect(answer.status == 200, "\(answer.text)")
            let entries = Self.entries(answer)
            try #require(entries.count == 4, "\(answer.text)")
            #expect(entries.map { $0["recordName"] as? String } == ["before", "forged", "tampered", "after"])
            for refused in entries[1...2] {
                #expect(Set(refused.keys) == ["recordName", "serverErrorCode", "reason"], "\(answer.text)")
                #expect(refused["serverErrorCode"] as? String == "BAD_REQUEST", "\(answer.text)")
                #expect(refused["reason"] as? String == "bad upload receipt (did_not_validate)", "\(answer.text)")
            }
            for saved in [entries[0], entries[3]] {
                #expect(saved["serverErrorCode"] == nil, "\(answer.text)")
                #expect(saved["recordChangeTag"] is String, "\(answer.text)")
            }
            #expect(try await alice.exists("before"))
            #expect(try await alice.exists("after"))
            #expect(try await !alice.exists("forged"))
            #expect(try await !alice.exists("tampered"))
        }
    }

    @Test("in a custom zone a non-atomic batch is answered in place too; an atomic one is refused whole, nothing saved")
    func aBadReceiptInACustomZone() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            let zone = try await alice.post(
                "private", "zones/modify",
                #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Lists"}}}]}"#)
            #expect(zone.status == 200, "\(zone.text)")

            let loose = try await alice.post(
                "private", "records/modify",
                LiveAnswerTests.modify(
                    Self.create("milk"), Self.create("forged", asset: Self.unknownUpload), zone: "Lists",
                    atomic: false))
            #expect(loose.status == 200, "\(loose.text)")
            let entries = Self.entries(loose)
            #expect(entries.first?["recordChangeTag"] is String, "\(loose.text)")
            #expect(entries.last?["serverErrorCode"] as? String == "BAD_REQUEST", "\(loose.text)")
            #expect(entries.last?["reason"] as? String == "bad upload receipt (did_not_validate)", "\(loose.text)")

            let whole = try await alice.post(
                "private", "records/modify",
                LiveAnswerTests.modify(
                    Self.create("bread"), Self.create("forged", asset: Self.unknownUpload), zone: "Lists",
                    atomic: true))
            #expect(whole.status == 400, "\(whole.text)")
            #expect(whole.json["serverErrorCode"] as? String == "BAD_REQUEST", "\(whole.text)")
            let reason = whole.json["reason"] as? String ?? ""
            #expect(reason.hasPrefix("bad upload receipt (did_not_validate)"), "\(whole.text)")
            #expect(reason.contains("upload it through assets/upload"), "says what to do: \(whole.text)")
            let read = try await alice.post(
                "private", "records/lookup", #"{"zoneID":{"zoneName":"Lists"},"records":[{"recordName":"bread"}]}"#)
            #expect(alice.firstRecord(read)["serverErrorCode"] as? String == "NOT_FOUND", "\(read.text)")
        }
    }

    @Test("a records/modify that cannot be read at all is still a 400 for the whole request")
    func anUnreadableRequestIsAWhole400() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            let answer = try await alice.post("public", "records/modify", #"{"operations":[{"operationType":"#)
            #expect(answer.status == 400, "\(answer.text)")
            #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST", "\(answer.text)")
            #expect(answer.json["records"] == nil, "\(answer.text)")
        }
    }

    // MARK: The keys every record carries

    /// Whether an entry carries `"pluginFields": {}` and `"deleted": false`, as every captured record does.
    static func carriesLiveKeys(_ entry: [String: Any]) -> Bool {
        (entry["pluginFields"] as? [String: Any])?.isEmpty == true && (entry["deleted"] as? Bool) == false
    }

    @Test(
        "public records carry pluginFields {} and deleted false in modify, lookup and query answers; a default-zone lookup's records carry no zoneID"
    )
    func publicRecordsCarryTheLiveKeys() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            let saved = try await alice.post("public", "records/modify", LiveAnswerTests.modify(Self.create("card")))
            #expect(Self.carriesLiveKeys(alice.firstRecord(saved)), "\(saved.text)")

            let read = try await alice.post("public", "records/lookup", #"{"records":[{"recordName":"card"}]}"#)
            let record = alice.firstRecord(read)
            #expect(record["recordChangeTag"] is String, "\(read.text)")
            #expect(Self.carriesLiveKeys(record), "\(read.text)")
            #expect(record["zoneID"] == nil, "\(read.text)")

            let named = try await alice.post(
                "public", "records/lookup", #"{"zoneID":{"zoneName":"_defaultZone"},"records":[{"recordName":"card"}]}"#
            )
            #expect(alice.firstRecord(named)["zoneID"] == nil, "\(named.text)")
            #expect(Self.carriesLiveKeys(alice.firstRecord(named)), "\(named.text)")

            let found = try await alice.post("public", "records/query", #"{"query":{"recordType":"Card"}}"#)
            #expect(Self.carriesLiveKeys(alice.firstRecord(found)), "\(found.text)")

            // A refusal is an error entry, with neither key.
            let missing = try await alice.post("public", "records/lookup", #"{"records":[{"recordName":"gone"}]}"#)
            #expect(
                Set(alice.firstRecord(missing).keys) == ["recordName", "serverErrorCode", "reason"], "\(missing.text)")
        }
    }

    @Test(
        "records of a custom zone carry pluginFields {}, deleted false and their zoneID in lookups and change feeds; a deletion there is deleted true"
    )
    func customZoneRecordsCarryTheLiveKeys() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            _ = try await alice.post(
                "private", "zones/modify",
                #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Lists"}}}]}"#)
            let saved = try await alice.post(
                "private", "records/modify",
                LiveAnswerTests.modify(Self.create("milk"), Self.create("bread"), zone: "Lists"))
            #expect(Self.entries(saved).allSatisfy(Self.carriesLiveKeys), "\(saved.text)")
            _ = try await alice.post(
                "private", "records/modify",
                LiveAnswerTests.modify(
                    #"{"operationType":"forceDelete","record":{"recordName":"bread"}}"#, zone: "Lists"))

            let read = try await alice.post(
                "private", "records/lookup", #"{"zoneID":{"zoneName":"Lists"},"records":[{"recordName":"milk"}]}"#)
            let record = alice.firstRecord(read)
            #expect(Self.carriesLiveKeys(record), "\(read.text)")
            #expect((record["zoneID"] as? [String: Any])?["zoneName"] as? String == "Lists", "\(read.text)")

            let changes = try await alice.post(
                "private", "changes/zone", #"{"zones":[{"zoneID":{"zoneName":"Lists"}}]}"#)
            let zone = (changes.json["zones"] as? [[String: Any]])?.first ?? [:]
            let entries = zone["records"] as? [[String: Any]] ?? []
            let milk = entries.first { $0["recordName"] as? String == "milk" } ?? [:]
            #expect(Self.carriesLiveKeys(milk), "\(changes.text)")
            let bread = entries.first { $0["recordName"] as? String == "bread" } ?? [:]
            #expect(bread["deleted"] as? Bool == true, "\(changes.text)")
        }
    }

    // MARK: records/resolve

    /// Alice's zone `Lists` with the record `trip` shared with Bob (read-only); the share's short GUID.
    static func sharedTrip(_ alice: Client) async throws -> String {
        _ = try await alice.post(
            "private", "zones/modify",
            #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Lists"}}}]}"#)
        let saved = try await alice.post(
            "private", "records/modify",
            LiveAnswerTests.modify(
                #"{"operationType":"create","record":{"recordName":"trip","recordType":"Trip","fields":{}}}"#,
                #"{"operationType":"create","record":{"recordType":"cloudkit.share","forRecord":{"recordName":"trip"},"#
                    + #""participants":[{"userIdentity":{"lookupInfo":{"emailAddress":"bob@example.com"}},"#
                    + #""permission":"READ_ONLY","type":"USER"}]}}"#,
                zone: "Lists"))
        let entries = entries(saved)
        return try #require(entries.last?["shortGUID"] as? String, "\(saved.text)")
    }

    static func resolve(_ client: Client, _ guid: String) async throws -> [String: Any] {
        let answer = try await client.post(
            "public", "records/resolve", #"{"shortGUIDs":[{"value":"\#(guid)","shouldFetchRootRecord":true}]}"#)
        #expect(answer.status == 200, "\(answer.text)")
        return try #require((answer.json["results"] as? [[String: Any]])?.first, "\(answer.text)")
    }

    @Test(
        "the owner resolving their own share is answered OWNER, ACCEPTED, READ_WRITE with their currentUserParticipant; the share lists the owner; potentialMatchList [] and the root record's shortGUID"
    )
    func theOwnerResolvesTheirOwnShare() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            _ = try await Client(base, "bob@example.com")
            let guid = try await Self.sharedTrip(alice)
            let result = try await Self.resolve(alice, guid)

            #expect(result["participantType"] as? String == "OWNER", "\(result)")
            #expect(result["participantStatus"] as? String == "ACCEPTED", "\(result)")
            #expect(result["participantPermission"] as? String == "READ_WRITE", "\(result)")
            #expect((result["potentialMatchList"] as? [Any])?.isEmpty == true, "\(result)")
            let share = result["share"] as? [String: Any] ?? [:]
            let current = share["currentUserParticipant"] as? [String: Any] ?? [:]
            #expect(current["type"] as? String == "OWNER", "\(share)")
            #expect((current["userIdentity"] as? [String: Any])?["userRecordName"] as? String == alice.user)
            let participants = share["participants"] as? [[String: Any]] ?? []
            #expect(participants.map { $0["type"] as? String } == ["OWNER", "USER"], "\(share)")
            let root = result["rootRecord"] as? [String: Any] ?? [:]
            #expect(root["shortGUID"] as? String == guid, "\(root)")
        }
    }

    @Test(
        "ownerIdentity and the share's owner carry userRecordName, nameComponents and lookupInfo, for the owner and for an invitee"
    )
    func theOwnersIdentityIsWhole() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            let bob = try await Client(base, "bob@example.com")
            let guid = try await Self.sharedTrip(alice)
            for caller in [alice, bob] {
                let result = try await Self.resolve(caller, guid)
                let share = result["share"] as? [String: Any] ?? [:]
                let owner = share["owner"] as? [String: Any] ?? [:]
                for identity in [result["ownerIdentity"], owner["userIdentity"]] {
                    let identity = identity as? [String: Any] ?? [:]
                    #expect(Set(identity.keys) == ["userRecordName", "nameComponents", "lookupInfo"], "\(result)")
                    #expect(identity["userRecordName"] as? String == alice.user)
                    let lookupInfo = identity["lookupInfo"] as? [String: Any]
                    #expect(lookupInfo?["emailAddress"] as? String == "alice@example.com", "\(result)")
                }
                let participants = share["participants"] as? [[String: Any]] ?? []
                #expect(participants.first?["type"] as? String == "OWNER", "\(share)")
                #expect(Self.carriesLiveKeys(share), "\(share)")
            }
            // The invitee is answered as before: their own entry.
            let invited = try await Self.resolve(bob, guid)
            #expect(invited["participantType"] as? String == "USER", "\(invited)")
            #expect(invited["participantStatus"] as? String == "INVITED", "\(invited)")
        }
    }

    // MARK: The conformance table

    @Test(
        "the reference table holds the keys captures show (pluginFields, deleted, zoneType, potentialMatchList), marked as from captures, and no uuid in per-record or per-zone errors"
    )
    func theTableFollowsTheCaptures() throws {
        let table = try ReferenceTable.load()
        func key(_ dictionary: String, _ name: String) -> ReferenceTable.Key? {
            table.dictionary(dictionary)?.keys.first { $0.key == name }
        }
        for (dictionary, name, presence) in [
            ("Record", "pluginFields", "unlessDeleted"), ("Record", "deleted", "always"),
            ("ZoneID", "zoneType", "sometimes"), ("ShortGUIDResult", "potentialMatchList", "always"),
        ] {
            let entry = try #require(key(dictionary, name), "\(dictionary) lacks \(name)")
            #expect(entry.presence == presence, "\(dictionary).\(name)")
            #expect(entry.capture != nil, "\(dictionary).\(name) says it comes from captures")
            #expect(entry.serve == nil, "\(dictionary).\(name) is the live service's, not serve's own")
        }
        #expect(key("RecordFetchError", "uuid") == nil)
        #expect(key("ZoneFetchError", "uuid") == nil)
        #expect(key("Error", "uuid")?.presence == "always", "the request-level error keeps its uuid")
        // The rendered table says which keys come from captures.
        #expect(table.markdown().contains("| `pluginFields` | "))
        #expect(table.markdown().contains("live: every captured record carries pluginFields {}"))
    }
}
