import Foundation
import Testing

/// A `zones/modify` delete as clients written against Apple's live service read it: OpenCloudKit tells a
/// deletion from a save by the entry's `deleted: true`, and finds no deletion in an entry without it.
@Suite(.serialized)
struct ZoneDeleteAnswerTests {
    typealias H = EmulatorHarness
    typealias Client = LiveAnswerTests.Client

    @Test(
        "a zones/modify delete is answered {zoneID, deleted: true} with the owner's zone ID, a create beside it with its Zone Dictionary"
    )
    func deleteIsAnsweredDeleted() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            try await LiveZoneIDTests.createZone(alice, "Old")
            let answer = try await alice.post(
                "private", "zones/modify",
                #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"New"}}},"#
                    + #"{"operationType":"delete","zone":{"zoneID":{"zoneName":"Old"}}}]}"#)
            LiveZoneIDTests.expectOwned(by: alice.user, answer, "zones/modify")
            let zones = try #require(answer.json["zones"] as? [[String: Any]], "\(answer.text)")
            try #require(zones.count == 2, "\(answer.text)")

            let created = zones[0]
            #expect((created["zoneID"] as? [String: Any])?["zoneName"] as? String == "New")
            #expect(created["deleted"] == nil, "\(created)")
            #expect(created["atomic"] as? Bool == true && created["syncToken"] is String, "\(created)")

            let deleted = zones[1]
            #expect((deleted["zoneID"] as? [String: Any])?["zoneName"] as? String == "Old")
            #expect(deleted["deleted"] as? Bool == true, "\(deleted)")
            #expect(Set(deleted.keys) == ["zoneID", "deleted"], "\(deleted)")

            let listed = try await alice.get("private", "zones/list")
            #expect(!listed.text.contains(#""Old""#), "\(listed.text)")
        }
    }

    @Test("deleting a zone that is not there is answered with its error, not deleted")
    func missingZoneIsAnError() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            let answer = try await alice.post(
                "private", "zones/modify",
                #"{"operations":[{"operationType":"delete","zone":{"zoneID":{"zoneName":"Nowhere"}}}]}"#)
            let entry = (answer.json["zones"] as? [[String: Any]])?.first ?? [:]
            #expect(entry["deleted"] == nil, "\(answer.text)")
            #expect(entry["serverErrorCode"] is String, "\(answer.text)")
        }
    }
}
