import CloudKitWire
import Foundation
import ShareKit
import Testing

/// A `records/modify` request that saves records whole need not have them sent back: the client asks for no
/// field (`desiredKeys`), or only a share's title when the request saves a share too, as each zone's first
/// request of an apply does, and answers with the fields it sent (what both sides encode and decode).
@Suite(.serialized)
struct ModifyAnswerTests {
    @Test("records created with a share in one request come back with every field sent, the share with its title")
    func wholeSavesWithAShare() async throws {
        try await EmulatorHarness.withEmulator { base in
            let store = EmulatorHarness.store(base)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
            let lists = ZoneID(zoneName: "Lists")
            _ = try await store.modifyZones([ZoneOperation(.create, lists)], in: .private, as: alice)
            let fields: [String: FieldValue] = [
                "title": .string("Groceries"), "qty": .int64(3), "price": .double(1.5),
                "tags": .list(elementType: .string, [.string("a"), .string("b")]),
            ]
            var share = Share.zoneWide(lists, title: "Family lists")
            share.participants = [Participant(userRecordName: bob, permission: .readWrite)]
            let outcomes = try await store.modifyRecords(
                [
                    RecordOperation(
                        .create, Record(recordName: "groceries", recordType: "List", zoneID: lists, fields: fields)),
                    RecordOperation(.create, share: share),
                    RecordOperation(.create, Record(recordName: "empty", recordType: "List", zoneID: lists)),
                ], in: lists, database: .private, atomic: true, as: alice)
            #expect(outcomes.map(\.error) == [nil, nil, nil])
            #expect(outcomes[0].savedRecord?.fields == fields)
            #expect(outcomes[0].savedRecord?.changeTag != nil)
            #expect(outcomes[2].savedRecord?.fields == [:])
            guard case .savedShare(let saved) = outcomes[1] else {
                Issue.record("the share was not saved: \(outcomes[1])")
                return
            }
            #expect(saved.title == "Family lists")
            #expect(saved.participants.map(\.userRecordName).contains(bob))
            // As the store holds them.
            let read = try await store.lookupRecords(["groceries"], in: lists, database: .private, as: alice)
            #expect(read.first?.savedRecord?.fields == fields)
            #expect(read.first?.savedRecord?.changeTag == outcomes[0].savedRecord?.changeTag)
        }
    }

    @Test("serve answers a records/modify with the fields desiredKeys names: a share's title, no record field")
    func serveAnswersDesiredKeys() async throws {
        try await EmulatorHarness.withEmulator { base in
            let (token, _) = try await EmulatorHarness.signIn(base, "alice@example.com")
            let query = ["ckAPIToken": EmulatorHarness.apiToken, "ckWebAuthToken": token]
            _ = try await EmulatorHarness.raw(
                base, EmulatorHarness.databasePath("private", "zones/modify"), query: query,
                body: #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Lists"}}}]}"#)
            let answer = try await EmulatorHarness.raw(
                base, EmulatorHarness.databasePath("private", "records/modify"), query: query,
                body: """
                    {"zoneID":{"zoneName":"Lists"},"desiredKeys":["\(shareTitleField)"],"operations":[
                    {"operationType":"create","record":{"recordName":"groceries","recordType":"List",
                     "fields":{"title":{"value":"Groceries"},"qty":{"value":3}}}},
                    {"operationType":"create","record":{"recordName":"cloudkit.zoneshare","recordType":"cloudkit.share",
                     "fields":{"\(shareTitleField)":{"value":"Family lists"}},"publicPermission":"NONE"}}]}
                    """)
            #expect(answer.status == 200, "\(answer.text)")
            let records = answer.json["records"] as? [[String: Any]] ?? []
            #expect(records.count == 2, "\(answer.text)")
            let recordFields = records.first?["fields"] as? [String: Any] ?? [:]
            #expect(recordFields.isEmpty, "\(answer.text)")
            let shareFields = records.last?["fields"] as? [String: [String: Any]] ?? [:]
            #expect(shareFields[shareTitleField]?["value"] as? String == "Family lists", "\(answer.text)")
        }
    }
}
