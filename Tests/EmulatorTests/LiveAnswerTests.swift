import CloudKitWire
import Foundation
import ShareKit
import Testing

/// `serve` answers as published captures of Apple's live service show it answering (shared/CLOUDKIT.md, "What
/// the live service answers"): requests sent as a client sends them, answers checked key by key and code by
/// code. The embedded store's side of the same rules is in Tests/ShareStoreSQLiteTests/LiveRuleTests.swift.
@Suite(.serialized)
struct LiveAnswerTests {
    typealias H = EmulatorHarness

    /// A signed-in user's raw requests to one emulator.
    struct Client {
        let base: String
        let token: String
        let user: String

        init(_ base: String, _ email: String) async throws {
            self.base = base
            (token, user) = try await H.signIn(base, email)
        }

        func post(_ database: String, _ operation: String, _ body: String) async throws -> H.Answer {
            try await H.raw(
                base, H.databasePath(database, operation), query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token],
                body: body, contentType: "text/plain")
        }

        func get(_ database: String, _ operation: String) async throws -> H.Answer {
            try await H.raw(
                base, H.databasePath(database, operation), query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token],
                method: "GET")
        }

        /// The first entry of an answer's `records`.
        func firstRecord(_ answer: H.Answer) -> [String: Any] {
            (answer.json["records"] as? [[String: Any]])?.first ?? [:]
        }

        /// Whether a record of this name can be read in the database's default zone.
        func exists(_ name: String, in database: String = "public") async throws -> Bool {
            let answer = try await post(database, "records/lookup", #"{"records":[{"recordName":"\#(name)"}]}"#)
            return firstRecord(answer)["serverErrorCode"] == nil
        }
    }

    static func save(_ operationType: String, _ name: String, tag: String? = nil, title: String = "x") -> String {
        let tagMember = tag.map { #","recordChangeTag":"\#($0)""# } ?? ""
        return #"{"operationType":"\#(operationType)","record":{"recordName":"\#(name)","recordType":"Card""#
            + #"\#(tagMember),"fields":{"title":{"value":"\#(title)"}}}}"#
    }

    static func modify(_ operations: String..., zone: String? = nil, atomic: Bool? = nil) -> String {
        var members = [#""operations":[\#(operations.joined(separator: ","))]"#]
        if let zone { members.append(#""zoneID":{"zoneName":"\#(zone)"}"#) }
        if let atomic { members.append(#""atomic":\#(atomic)"#) }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// The words of a reason: a change tag is told only as one of them.
    static func words(_ reason: String?) -> Set<String> {
        Set((reason ?? "").split { !$0.isLetter && !$0.isNumber && $0 != "-" && $0 != "_" }.map(String.init))
    }

    // MARK: Permission before the change tag

    @Test("a user who may not write a public record is refused ACCESS_DENIED whatever change tag they send")
    func permissionBeforeTagInThePublicDatabase() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            let bob = try await Client(base, "bob@example.com")
            let created = try await alice.post("public", "records/modify", Self.modify(Self.save("create", "card")))
            let tag = try #require(alice.firstRecord(created)["recordChangeTag"] as? String, "\(created.text)")

            for sent in ["stale-tag", tag] {
                for operationType in ["update", "replace", "delete"] {
                    let operation =
                        operationType == "delete"
                        ? #"{"operationType":"delete","record":{"recordName":"card","recordChangeTag":"\#(sent)"}}"#
                        : Self.save(operationType, "card", tag: sent, title: "Bob's")
                    let answer = try await bob.post("public", "records/modify", Self.modify(operation))
                    #expect(answer.status == 200, "\(answer.text)")
                    let entry = bob.firstRecord(answer)
                    #expect(Set(entry.keys) == ["recordName", "serverErrorCode", "reason"], "\(answer.text)")
                    #expect(entry["serverErrorCode"] as? String == "ACCESS_DENIED", "\(operationType): \(answer.text)")
                    let reason = entry["reason"] as? String ?? ""
                    #expect(reason.hasPrefix("Operation not permitted"), "\(answer.text)")
                    // Neither the current tag nor the creator is told.
                    #expect(!Self.words(reason).contains(tag), "\(answer.text)")
                    #expect(!reason.contains(alice.user), "\(answer.text)")
                }
            }
            // Nothing changed; the creator, who may write, is the one whose stale tag is a conflict.
            let read = try await alice.post("public", "records/lookup", #"{"records":[{"recordName":"card"}]}"#)
            #expect(alice.firstRecord(read)["recordChangeTag"] as? String == tag, "\(read.text)")
            let stale = try await alice.post(
                "public", "records/modify", Self.modify(Self.save("update", "card", tag: "stale-tag")))
            #expect(alice.firstRecord(stale)["serverErrorCode"] as? String == "CONFLICT", "\(stale.text)")
        }
    }

    @Test("a read-only participant is refused ACCESS_DENIED, not CONFLICT, for a stale tag; the share likewise")
    func permissionBeforeTagInTheSharedDatabase() async throws {
        try await H.withEmulator { base in
            let store = H.store(base)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            _ = try await store.signIn(email: "bob@example.com", name: nil)
            let bob = try await Client(base, "bob@example.com")
            let lists = ZoneID(zoneName: "Lists")
            _ = try await store.modifyZones([ZoneOperation(.create, lists)], in: .private, as: alice)
            let saved = try await store.modifyRecords(
                [
                    .init(.create, Record(recordName: "milk", recordType: "Item", zoneID: lists)),
                    .init(.create, share: Share.zoneWide(lists, title: "Lists")),
                ], in: lists, database: .private, atomic: true, as: alice)
            var share = try #require(saved[1].savedShare, "\(saved)")
            share.participants = [
                Participant(userRecordName: bob.user, email: "bob@example.com", permission: .readOnly)
            ]
            let updated = try await store.modifyRecords(
                [.init(.update, share: share)], in: lists, database: .private, atomic: false, as: alice)
            let url = try #require(updated[0].savedShare?.url, "\(updated)")
            _ = try await store.acceptShare(url: url, as: bob.user)
            let read = try await store.lookupRecords(
                ["milk", zoneShareRecordName], in: lists, database: .private, as: alice)
            let recordTag = try #require(read[0].savedRecord?.changeTag)
            let shareTag = try #require(read[1].savedShare?.changeTag)

            let zone = #"{"zoneName":"Lists","ownerRecordName":"\#(alice)"}"#
            let update =
                #"{"operationType":"update","record":{"recordName":"milk","recordType":"Item","#
                + #""recordChangeTag":"stale","fields":{"qty":{"value":2}}}}"#
            let shareUpdate =
                #"{"operationType":"update","record":{"recordName":"cloudkit.zoneshare","#
                + #""recordType":"cloudkit.share","recordChangeTag":"stale","publicPermission":"NONE"}}"#
            let delete = #"{"operationType":"delete","record":{"recordName":"milk","recordChangeTag":"stale"}}"#
            for operation in [update, shareUpdate, delete] {
                let answer = try await bob.post(
                    "shared", "records/modify", #"{"operations":[\#(operation)],"zoneID":\#(zone)}"#)
                #expect(answer.status == 200, "\(answer.text)")
                let entry = bob.firstRecord(answer)
                #expect(entry["serverErrorCode"] as? String == "ACCESS_DENIED", "\(answer.text)")
                #expect(entry["uuid"] == nil, "\(answer.text)")
                let told = Self.words(entry["reason"] as? String)
                #expect(!told.contains(recordTag) && !told.contains(shareTag), "\(answer.text)")
            }
        }
    }

    // MARK: atomic in a default zone

    @Test("atomic: true in a default zone, public or private, is refused whole with 400 and saves nothing")
    func atomicInADefaultZone() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            for database in ["public", "private"] {
                for zone in [nil, defaultZoneName] {
                    let answer = try await alice.post(
                        database, "records/modify",
                        Self.modify(Self.save("create", "one"), Self.save("create", "two"), zone: zone, atomic: true))
                    #expect(answer.status == 400, "\(database) \(zone ?? "-"): \(answer.text)")
                    #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST", "\(answer.text)")
                    #expect(
                        answer.json["reason"] as? String == "atomic operations not supported in default zone",
                        "\(answer.text)")
                    // A request-level error keeps its uuid.
                    #expect(answer.json["uuid"] as? String != nil, "\(answer.text)")
                    #expect(try await alice.exists("one", in: database) == false)
                    #expect(try await alice.exists("two", in: database) == false)
                }
            }
            // One operation is refused as well: the flag itself is.
            let one = try await alice.post(
                "public", "records/modify", Self.modify(Self.save("create", "one"), atomic: true))
            #expect(one.status == 400, "\(one.text)")
            // atomic: false, or none, saves; a custom zone takes atomic: true.
            let plain = try await alice.post(
                "public", "records/modify", Self.modify(Self.save("create", "one"), atomic: false))
            #expect(plain.status == 200 && alice.firstRecord(plain)["recordChangeTag"] != nil, "\(plain.text)")
            _ = try await alice.post(
                "private", "zones/modify",
                #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Lists"}}}]}"#)
            let custom = try await alice.post(
                "private", "records/modify",
                Self.modify(Self.save("create", "one"), Self.save("create", "two"), zone: "Lists", atomic: true))
            #expect(custom.status == 200, "\(custom.text)")
            #expect((custom.json["records"] as? [[String: Any]])?.count == 2, "\(custom.text)")
        }
    }

    @Test("the http: store leaves the atomic flag out for one write in a default zone and is refused for several")
    func httpStoreInADefaultZone() async throws {
        try await H.withEmulator { base in
            let store = H.store(base)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            let zone = ZoneID.defaultZone
            // A lane's write: one forced save, atomic, in the public database.
            let one = try await store.modifyRecords(
                [.init(.forceUpdate, Record(recordName: "card", recordType: "Card", zoneID: zone))], in: zone,
                database: .public, atomic: true, as: alice)
            #expect(one.map(\.error) == [nil])
            let several = [
                RecordOperation(.create, Record(recordName: "a", recordType: "Card", zoneID: zone)),
                RecordOperation(.create, Record(recordName: "b", recordType: "Card", zoneID: zone)),
            ]
            await #expect(throws: ShareError.self) {
                _ = try await store.modifyRecords(several, in: zone, database: .public, atomic: true, as: alice)
            }
            do {
                _ = try await store.modifyRecords(several, in: zone, database: .public, atomic: true, as: alice)
            } catch let error as ShareError {
                #expect(error.code == .badRequest)
                #expect(error.reason == "atomic operations not supported in default zone")
            }
            let read = try await store.lookupRecords(["a", "b"], in: zone, database: .public, as: alice)
            #expect(read.map(\.error?.code) == [.notFound, .notFound])
        }
    }

    // MARK: A write without its change tag

    @Test("an update, replace or delete without recordChangeTag is refused whole with 400; the forced forms are not")
    func missingChangeTag() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            let created = try await alice.post("public", "records/modify", Self.modify(Self.save("create", "card")))
            let tag = try #require(alice.firstRecord(created)["recordChangeTag"] as? String, "\(created.text)")
            let untaggedDelete = #"{"operationType":"delete","record":{"recordName":"card"}}"#
            for operation in [Self.save("update", "card"), Self.save("replace", "card"), untaggedDelete] {
                // A valid create beside it is not saved either.
                let answer = try await alice.post(
                    "public", "records/modify", Self.modify(Self.save("create", "beside"), operation))
                #expect(answer.status == 400, "\(answer.text)")
                #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST", "\(answer.text)")
                #expect(
                    answer.json["reason"] as? String == "missing required field 'recordChangeTag'", "\(answer.text)")
                #expect(answer.json["records"] == nil, "\(answer.text)")
                #expect(try await alice.exists("beside") == false)
            }
            let read = try await alice.post("public", "records/lookup", #"{"records":[{"recordName":"card"}]}"#)
            #expect(alice.firstRecord(read)["recordChangeTag"] as? String == tag, "\(read.text)")

            // forceUpdate, forceReplace and forceDelete take no tag; a tagged update still saves.
            let tagged = try await alice.post(
                "public", "records/modify", Self.modify(Self.save("update", "card", tag: tag, title: "y")))
            #expect(tagged.status == 200 && alice.firstRecord(tagged)["serverErrorCode"] == nil, "\(tagged.text)")
            for operation in [
                Self.save("forceUpdate", "card"), Self.save("forceReplace", "card"),
                #"{"operationType":"forceDelete","record":{"recordName":"card"}}"#,
            ] {
                let answer = try await alice.post("public", "records/modify", Self.modify(operation))
                #expect(answer.status == 200, "\(answer.text)")
                #expect(alice.firstRecord(answer)["serverErrorCode"] == nil, "\(answer.text)")
            }
            #expect(try await alice.exists("card") == false)
        }
    }

    // MARK: Errors' keys

    @Test("per-record and per-zone errors carry no uuid; GET users/discover's 500 carries no reason")
    func errorKeys() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            let lookup = try await alice.post("public", "records/lookup", #"{"records":[{"recordName":"nothing"}]}"#)
            #expect(lookup.status == 200, "\(lookup.text)")
            let entry = alice.firstRecord(lookup)
            #expect(Set(entry.keys) == ["recordName", "serverErrorCode", "reason"], "\(lookup.text)")
            #expect(entry["serverErrorCode"] as? String == "NOT_FOUND")

            let zones = try await alice.post("private", "zones/lookup", #"{"zones":[{"zoneName":"Nowhere"}]}"#)
            #expect(zones.status == 200, "\(zones.text)")
            let zone = (zones.json["zones"] as? [[String: Any]])?.first ?? [:]
            #expect(Set(zone.keys) == ["zoneID", "serverErrorCode", "reason"], "\(zones.text)")
            #expect(zone["serverErrorCode"] as? String == "ZONE_NOT_FOUND", "\(zones.text)")

            let discover = try await alice.get("public", "users/discover")
            #expect(discover.status == 500, "\(discover.text)")
            #expect(Set(discover.json.keys) == ["uuid", "serverErrorCode"], "\(discover.text)")
            #expect(discover.json["serverErrorCode"] as? String == "INTERNAL_ERROR")
        }
    }

    // MARK: Lenient reading

    @Test("records/lookup takes records as one dictionary as well as a list")
    func lookupOfOneDictionary() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            _ = try await alice.post("public", "records/modify", Self.modify(Self.save("create", "card", title: "Hi")))
            let answer = try await alice.post("public", "records/lookup", #"{"records":{"recordName":"card"}}"#)
            #expect(answer.status == 200, "\(answer.text)")
            let records = answer.json["records"] as? [[String: Any]] ?? []
            #expect(records.count == 1, "\(answer.text)")
            #expect(records.first?["recordName"] as? String == "card")
            let fields = records.first?["fields"] as? [String: [String: Any]]
            #expect(fields?["title"]?["value"] as? String == "Hi", "\(answer.text)")
            // Anything else there is still refused, saying what was expected.
            let bad = try await alice.post("public", "records/lookup", #"{"records":"card"}"#)
            #expect(bad.status == 400, "\(bad.text)")
            #expect(bad.json["serverErrorCode"] as? String == "BAD_REQUEST")
        }
    }
}
