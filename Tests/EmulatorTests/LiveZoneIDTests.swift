import Foundation
import Testing

/// Zone IDs as `serve` answers them, as captures of Apple's live service show them (shared/CLOUDKIT.md, "What the
/// live service answers"): every zone ID names its owner's real user record name, never `__defaultOwner__`, and
/// carries its `zoneType`; `__defaultOwner__` is still read in requests as "my own zone".
@Suite(.serialized)
struct LiveZoneIDTests {
    typealias H = EmulatorHarness
    typealias Client = LiveAnswerTests.Client

    /// Every `zoneID` dictionary anywhere in an answer, with the path that leads to it.
    static func zoneIDs(in value: Any, at path: String = "") -> [(path: String, zoneID: [String: Any])] {
        if let object = value as? [String: Any] {
            return object.sorted { $0.key < $1.key }.flatMap { key, member -> [(path: String, zoneID: [String: Any])] in
                let here = path + "." + key
                if key == "zoneID", let zoneID = member as? [String: Any] { return [(here, zoneID)] }
                return zoneIDs(in: member, at: here)
            }
        }
        if let list = value as? [Any] {
            return list.enumerated().flatMap { index, item in zoneIDs(in: item, at: path + "[\(index)]") }
        }
        return []
    }

    /// Checks that every zone ID of `answer` names `owner` and the type its zone name implies; returns how many
    /// there were.
    @discardableResult
    static func expectOwned(by owner: String, _ answer: H.Answer, _ what: String) -> Int {
        #expect(answer.status == 200, "\(what): \(answer.text)")
        let found = zoneIDs(in: answer.json)
        for (path, zoneID) in found {
            let name = zoneID["zoneName"] as? String
            #expect(zoneID["ownerRecordName"] as? String == owner, "\(what) \(path): \(zoneID)")
            let type = name == "_defaultZone" ? "DEFAULT_ZONE" : "REGULAR_CUSTOM_ZONE"
            #expect(zoneID["zoneType"] as? String == type, "\(what) \(path): \(zoneID)")
        }
        #expect(!answer.text.contains("__defaultOwner__"), "\(what): \(answer.text)")
        return found.count
    }

    static func createZone(_ client: Client, _ name: String) async throws {
        let made = try await client.post(
            "private", "zones/modify",
            #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"\#(name)"}}}]}"#)
        expectOwned(by: client.user, made, "zones/modify")
    }

    @Test(
        "the caller's own zones are answered with their real user record name and zoneType in zones/list, records/modify, lookup, query, changes/database and changes/zone"
    )
    func ownZonesNameTheirOwner() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            #expect(alice.user.hasPrefix("_") && alice.user != "__defaultOwner__", "\(alice.user)")
            try await Self.createZone(alice, "Lists")

            let zones = try await alice.get("private", "zones/list")
            #expect(Self.expectOwned(by: alice.user, zones, "zones/list") == 2, "\(zones.text)")
            let names = (zones.json["zones"] as? [[String: Any]] ?? []).compactMap {
                ($0["zoneID"] as? [String: Any])?["zoneName"] as? String
            }
            #expect(Set(names) == ["_defaultZone", "Lists"], "\(zones.text)")

            let saved = try await alice.post(
                "private", "records/modify",
                LiveAnswerTests.modify(LiveAnswerTests.save("create", "milk"), zone: "Lists"))
            #expect(Self.expectOwned(by: alice.user, saved, "records/modify") == 1, "\(saved.text)")
            let home = try await alice.post(
                "private", "records/modify", LiveAnswerTests.modify(LiveAnswerTests.save("create", "note")))
            Self.expectOwned(by: alice.user, home, "records/modify in _defaultZone")

            let read = try await alice.post(
                "private", "records/lookup", #"{"zoneID":{"zoneName":"Lists"},"records":[{"recordName":"milk"}]}"#)
            #expect(Self.expectOwned(by: alice.user, read, "records/lookup") >= 1, "\(read.text)")
            #expect(alice.firstRecord(read)["recordChangeTag"] is String, "\(read.text)")

            let found = try await alice.post(
                "private", "records/query", #"{"zoneID":{"zoneName":"Lists"},"query":{"recordType":"Card"}}"#)
            #expect(Self.expectOwned(by: alice.user, found, "records/query") >= 1, "\(found.text)")
            #expect(alice.firstRecord(found)["recordName"] as? String == "milk", "\(found.text)")

            let database = try await alice.post("private", "changes/database", "{}")
            #expect(Self.expectOwned(by: alice.user, database, "changes/database") >= 1, "\(database.text)")

            let zone = try await alice.post("private", "changes/zone", #"{"zones":[{"zoneID":{"zoneName":"Lists"}}]}"#)
            #expect(Self.expectOwned(by: alice.user, zone, "changes/zone") >= 2, "\(zone.text)")
        }
    }

    @Test("a signed-in user's public records are answered with their name as the zone's owner and DEFAULT_ZONE")
    func publicZoneIDsNameTheCaller() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            let saved = try await alice.post(
                "public", "records/modify", LiveAnswerTests.modify(LiveAnswerTests.save("create", "card")))
            Self.expectOwned(by: alice.user, saved, "public records/modify")
            let found = try await alice.post("public", "records/query", #"{"query":{"recordType":"Card"}}"#)
            #expect(Self.expectOwned(by: alice.user, found, "public records/query") == 1, "\(found.text)")
        }
    }

    @Test(
        "a request naming the caller's zone with __defaultOwner__, with the real name or with no owner is answered alike, with the real name"
    )
    func defaultOwnerIsStillReadInRequests() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            try await Self.createZone(alice, "Lists")
            for owner in [#","ownerRecordName":"__defaultOwner__""#, #","ownerRecordName":"\#(alice.user)""#, ""] {
                let zoneID = #"{"zoneName":"Lists"\#(owner)}"#
                let name = "card\(owner.count)"
                let saved = try await alice.post(
                    "private", "records/modify",
                    #"{"zoneID":\#(zoneID),"operations":[\#(LiveAnswerTests.save("create", name))]}"#)
                Self.expectOwned(by: alice.user, saved, "records/modify with \(zoneID)")
                #expect(alice.firstRecord(saved)["recordChangeTag"] is String, "\(saved.text)")
                let read = try await alice.post(
                    "private", "records/lookup", #"{"zoneID":\#(zoneID),"records":[{"recordName":"\#(name)"}]}"#)
                Self.expectOwned(by: alice.user, read, "records/lookup with \(zoneID)")
                #expect(alice.firstRecord(read)["recordName"] as? String == name, "\(read.text)")
                let changes = try await alice.post("private", "changes/zone", #"{"zones":[{"zoneID":\#(zoneID)}]}"#)
                Self.expectOwned(by: alice.user, changes, "changes/zone with \(zoneID)")
            }
        }
    }

    @Test(
        "a share's zoneID and every zone ID of records/resolve (zoneID, rootRecord, rootRecord.share, share) name the owner, for the owner and for an invitee"
    )
    func sharesNameTheirOwner() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            let bob = try await Client(base, "bob@example.com")
            let guid = try await LiveAnswerShapeTests.sharedTrip(alice)

            let share = try await alice.post(
                "private", "records/lookup", #"{"zoneID":{"zoneName":"Lists"},"records":[{"recordName":"trip"}]}"#)
            Self.expectOwned(by: alice.user, share, "the root record with its share")

            for caller in [alice, bob] {
                let answer = try await caller.post(
                    "public", "records/resolve",
                    #"{"shortGUIDs":[{"value":"\#(guid)","shouldFetchRootRecord":true}]}"#)
                #expect(Self.expectOwned(by: alice.user, answer, "records/resolve") == 4, "\(answer.text)")
                let result = (answer.json["results"] as? [[String: Any]])?.first ?? [:]
                let root = result["rootRecord"] as? [String: Any] ?? [:]
                #expect(((root["share"] as? [String: Any])?["zoneID"]) != nil, "\(answer.text)")
            }

            let accepted = try await bob.post("public", "records/accept", #"{"shortGUIDs":[{"value":"\#(guid)"}]}"#)
            Self.expectOwned(by: alice.user, accepted, "records/accept")
            // In Bob's shared database the zone is Alice's, named as hers.
            let zones = try await bob.get("shared", "zones/list")
            #expect(Self.expectOwned(by: alice.user, zones, "shared zones/list") == 1, "\(zones.text)")
            let read = try await bob.post(
                "shared", "records/lookup",
                #"{"zoneID":{"zoneName":"Lists","ownerRecordName":"\#(alice.user)"},"records":[{"recordName":"trip"}]}"#
            )
            #expect(Self.expectOwned(by: alice.user, read, "shared records/lookup") >= 1, "\(read.text)")
            let changes = try await bob.post("shared", "changes/database", "{}")
            #expect(Self.expectOwned(by: alice.user, changes, "shared changes/database") == 1, "\(changes.text)")
        }
    }
}
