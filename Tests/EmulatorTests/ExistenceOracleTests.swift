import CloudKitWire
import Foundation
import ShareKit
import SharelaneTestSupport
import Testing

/// A refusal never tells an outsider what exists, over raw HTTP against a real `sharelane serve`: every
/// operation about someone's zone the caller may not see answers as it does for a zone that does not exist
/// (`ZONE_NOT_FOUND`, the same words), and every operation about a record it may not read as for a record
/// that does not exist.
@Suite(.serialized) struct ExistenceOracleTests {
    typealias H = EmulatorHarness

    /// Alice's zone `FamilyLists` (shared zone-wide with Bob, who accepted) and `Trips` (a hierarchy under
    /// `italy` shared with Carol, who accepted; `secret` outside it); Carol's web auth token and Alice's name.
    static func seed(_ base: String) async throws -> (carol: String, alice: String) {
        let store = H.store(base)
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
        let carol = try await store.signIn(email: "carol@example.com", name: nil).recordName
        let lists = ZoneID(zoneName: "FamilyLists")
        let trips = ZoneID(zoneName: "Trips")
        _ = try await store.modifyZones(
            [ZoneOperation(.create, lists), ZoneOperation(.create, trips)], in: .private, as: alice)
        var zoneShare = Share.zoneWide(lists, title: "Family lists")
        zoneShare.participants = [Participant(userRecordName: bob, email: "bob@example.com", permission: .readWrite)]
        let listed = try await store.modifyRecords(
            [
                .init(.create, Record(recordName: "groceries", recordType: "TodoList", zoneID: lists)),
                .init(.create, share: zoneShare),
            ], in: lists, database: .private, atomic: true, as: alice)
        _ = try await store.acceptShare(url: try #require(listed[1].savedShare?.url), as: bob)
        var tripShare = Share(recordName: "italy-share", zoneID: trips, rootRecordName: "italy")
        tripShare.participants = [
            Participant(userRecordName: carol, email: "carol@example.com", permission: .readWrite)
        ]
        let planned = try await store.modifyRecords(
            [
                .init(.create, Record(recordName: "italy", recordType: "Trip", zoneID: trips)),
                .init(.create, Record(recordName: "secret", recordType: "Trip", zoneID: trips)),
                .init(.create, share: tripShare),
            ], in: trips, database: .private, atomic: true, as: alice)
        _ = try await store.acceptShare(url: try #require(planned[2].savedShare?.url), as: carol)
        let (token, _) = try await H.signIn(base, "carol@example.com")
        return (token, alice)
    }

    /// What an answer says, with `name` (the zone or record asked about) written as NAME: its status, and its
    /// code and reason, or each entry's.
    static func refusal(_ answer: H.Answer, naming name: String) -> String {
        func words(_ entry: [String: Any]) -> String {
            let code = entry["serverErrorCode"] as? String ?? "ok"
            let reason = (entry["reason"] as? String ?? "").replacingOccurrences(of: name, with: "NAME")
            return "\(code): \(reason)"
        }
        var parts = ["HTTP \(answer.status)"]
        if answer.json["serverErrorCode"] != nil { parts.append(words(answer.json)) }
        for key in ["records", "zones"] {
            for entry in answer.json[key] as? [[String: Any]] ?? [] { parts.append(words(entry)) }
        }
        return parts.joined(separator: " | ")
    }

    /// Each operation's body about the zone `zone` of `owner` (and its record `record`), in the shared
    /// database.
    static func requests(zone: String, owner: String, record: String) -> [(operation: String, body: String)] {
        let zoneID = #"{"zoneName":"\#(zone)","ownerRecordName":"\#(owner)"}"#
        func modify(_ type: String, _ extra: String = "") -> String {
            #"{"zoneID":\#(zoneID),"operations":[{"operationType":"\#(type)","record":{"recordName":"\#(record)","#
                + #""recordType":"Todo"\#(extra),"fields":{"title":{"value":"x"}}}}]}"#
        }
        return [
            ("records/modify", modify("create")),
            ("records/modify", modify("update", #","recordChangeTag":"1""#)),
            ("records/modify", modify("forceUpdate")),
            ("records/modify", modify("replace", #","recordChangeTag":"1""#)),
            ("records/modify", modify("delete", #","recordChangeTag":"1""#)),
            ("records/modify", modify("forceDelete")),
            (
                "records/modify",
                #"{"zoneID":\#(zoneID),"operations":[{"operationType":"forceUpdate","record":{"#
                    + #""recordName":"cloudkit.zoneshare","recordType":"cloudkit.share","publicPermission":"READ_WRITE"}}]}"#
            ),
            ("records/lookup", #"{"zoneID":\#(zoneID),"records":[{"recordName":"\#(record)"}]}"#),
            ("records/query", #"{"zoneID":\#(zoneID),"query":{"recordType":"Todo"}}"#),
            ("records/changes", #"{"zoneID":\#(zoneID)}"#),
            ("changes/zone", #"{"zones":[{"zoneID":\#(zoneID)}]}"#),
            ("zones/lookup", #"{"zones":[\#(zoneID)]}"#),
        ]
    }

    @Test(
        "an outsider's request about someone's zone answers, for every operation, exactly as for a zone that does not exist: ZONE_NOT_FOUND with the same reason"
    )
    func anOutsiderLearnsNoZone() async throws {
        try await H.withEmulator { base in
            var (token, alice) = try await Self.seed(base)
            let existing = Self.requests(zone: "FamilyLists", owner: alice, record: "groceries")
            let missing = Self.requests(zone: "NoSuchZone", owner: alice, record: "groceries")
            for (asked, control) in zip(existing, missing) {
                let path = H.databasePath("shared", asked.operation)
                let answer = try await H.raw(
                    base, path, query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token], body: asked.body)
                let seen = Self.refusal(answer, naming: "FamilyLists")
                let none = Self.refusal(
                    try await H.raw(
                        base, path, query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token], body: control.body),
                    naming: "NoSuchZone")
                #expect(seen == none, "\(asked.operation) \(asked.body)")
                #expect(seen.contains("ZONE_NOT_FOUND"), "\(asked.operation): \(seen)")
                #expect(!seen.contains("participant"), "\(asked.operation): \(seen)")
                token = answer.nextToken ?? token
            }
            // Nothing was written: Alice's list is as it was, with its share.
            let store = H.store(base)
            let owner = try await store.signIn(email: "alice@example.com", name: nil).recordName
            let now = try await store.lookupRecords(
                ["groceries"], in: ZoneID(zoneName: "FamilyLists"), database: .private, as: owner)
            #expect(now.first?.savedRecord?.fields.isEmpty == true, "\(now)")
        }
    }

    @Test(
        "a participant's request about a record outside what is shared with it answers as for a record that does not exist"
    )
    func aParticipantLearnsNoRecordOutsideItsShare() async throws {
        try await H.withEmulator { base in
            var (token, alice) = try await Self.seed(base)
            let hidden = Self.requests(zone: "Trips", owner: alice, record: "secret")
            let missing = Self.requests(zone: "Trips", owner: alice, record: "nowhere")
            for (asked, control) in zip(hidden, missing)
            where ["records/modify", "records/lookup"].contains(asked.operation)
                && !asked.body.contains("cloudkit.zoneshare")
            {
                let path = H.databasePath("shared", asked.operation)
                let answer = try await H.raw(
                    base, path, query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token], body: asked.body)
                let seen = Self.refusal(answer, naming: "secret")
                let none = Self.refusal(
                    try await H.raw(
                        base, path, query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token], body: control.body),
                    naming: "nowhere")
                #expect(seen == none, "\(asked.operation) \(asked.body)")
                #expect(!seen.contains("| ok"), "refused: \(asked.operation): \(seen)")
                token = answer.nextToken ?? token
            }
        }
    }
}
