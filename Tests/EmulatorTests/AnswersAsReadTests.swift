import CloudKitWire
import Foundation
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport
import Testing

/// The emulator writes lookups and queries as the SQLite store reads them (`RecordReceiver`): each
/// answer is the answer of the outcomes the store returns, access refusals, shares, missing and repeated names,
/// pages and their markers included.
@Suite struct AnswersAsReadTests {
    /// A zone of Alice's: records in and out of a hierarchy shared read-only with Bob, who accepted.
    static func withStore(
        _ body: (SQLiteStore, _ alice: UserRecordName, _ bob: UserRecordName, _ share: String) async throws -> Void
    ) async throws {
        try await TemporaryDirectory.with("answers") { scratch in
            let store = try SQLiteStore(path: scratch.file("store.sqlite"), logger: EmulatorHarness.quiet)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
            let trips = ZoneID(zoneName: "Trips")
            _ = try await store.modifyZones([ZoneOperation(.create, trips)], in: .private, as: alice)
            func item(_ name: String, parent: String? = nil, _ fields: [String: FieldValue]) -> RecordOperation {
                var record = Record(recordName: name, recordType: "Item", zoneID: trips, fields: fields)
                record.parent = parent
                return RecordOperation(.create, record)
            }
            let saved = try await store.modifyRecords(
                [
                    item("italy", ["title": .string("Italy"), "qty": .int64(1)]),
                    item("hotel", parent: "italy", ["title": .string("Hôtel \"Roma\" 🐑"), "qty": .int64(2)]),
                    item("train", parent: "italy", ["when": .timestamp(1_700_000_000_000), "price": .double(9.5)]),
                    item(
                        "tags", parent: "italy",
                        ["tags": .list(elementType: .string, [.string("a")]), "qty": .int64(4)]),
                    item("notes", ["title": .string("private"), "qty": .int64(3)]),
                    RecordOperation(
                        .create,
                        share: Share(
                            recordName: "", zoneID: trips, rootRecordName: "italy", title: "Italy",
                            participants: [Participant(userRecordName: bob, permission: .readOnly)])),
                ], in: trips, database: .private, atomic: true, as: alice)
            guard case .savedShare(let share) = saved[5], let url = share.url else {
                throw FixtureError("the share was not saved: \(saved[5])")
            }
            _ = try await store.acceptShare(url: url, as: bob)
            try await body(store, alice, bob, share.recordName)
        }
    }

    struct FixtureError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The answer as JSON values (error entries carry no fresh UUID to leave out).
    static func answer(_ bytes: Data) throws -> RecordsResponse {
        try JSONDecoder().decode(RecordsResponse.self, from: bytes)
    }

    @Test("a lookup written as the store reads it is the lookup of the outcomes it returns")
    func lookups() async throws {
        try await Self.withStore { store, alice, bob, shareName in
            let names = ["notes", "hotel", "missing", "italy", "hotel", shareName, "tags", "train"]
            let shared = ZoneID(zoneName: "Trips", ownerRecordName: alice)
            for (zone, database, user, desiredKeys) in [
                (ZoneID(zoneName: "Trips"), DatabaseScope.private, alice, nil as [String]?),
                (shared, .shared, bob, nil), (shared, .shared, bob, ["title"]),
                (ZoneID(zoneName: "Nowhere"), .private, alice, nil),
            ] {
                let writer = RecordsAnswerWriter(
                    currentUser: user, desiredKeys: desiredKeys, numbersAsStrings: nil, capacity: 0)
                try await store.lookupRecords(names, in: zone, database: database, as: user, into: writer)
                let outcomes = try await store.lookupRecords(names, in: zone, database: database, as: user)
                let asRead = try Self.answer(try writer.finish(continuationMarker: nil).data)
                let reference = try Self.answer(
                    try WireCoding.bodyEncoder().encode(
                        RecordsResponse(
                            records: outcomes.map {
                                WireRecord($0, currentUser: user).answering(
                                    desiredKeys: desiredKeys, numbersAsStrings: nil
                                ).asAnswered()
                            })))
                #expect(asRead == reference, "\(database) as \(user)")
                #expect(asRead.records.count == names.count)
            }
            // What the answers hold: Bob reads the hierarchy and its share, not the record outside it.
            let writer = RecordsAnswerWriter(currentUser: bob, desiredKeys: nil, numbersAsStrings: nil, capacity: 0)
            try await store.lookupRecords(names, in: shared, database: .shared, as: bob, into: writer)
            let codes = try Self.answer(try writer.finish(continuationMarker: nil).data).records.map {
                $0.serverErrorCode ?? $0.recordName ?? "?"
            }
            #expect(codes == ["NOT_FOUND", "hotel", "NOT_FOUND", "italy", "hotel", shareName, "tags", "train"])
        }
    }

    @Test("a query page written as the store reads it is the page it returns, its marker included")
    func queries() async throws {
        try await Self.withStore { store, alice, bob, _ in
            let shared = ZoneID(zoneName: "Trips", ownerRecordName: alice)
            let queries: [(RecordQuery, ZoneID, DatabaseScope, UserRecordName)] = [
                (RecordQuery(recordType: "Item"), ZoneID(zoneName: "Trips"), .private, alice),
                (RecordQuery(recordType: "Item", resultsLimit: 2), ZoneID(zoneName: "Trips"), .private, alice),
                (
                    RecordQuery(recordType: "Item", resultsLimit: 2, continuationMarker: "khotel"),
                    ZoneID(zoneName: "Trips"), .private, alice
                ),
                (RecordQuery(recordType: "Item"), shared, .shared, bob),
                (
                    RecordQuery(recordType: "Item", filters: [QueryFilter("qty", .greaterThan, .int64(1))]),
                    ZoneID(zoneName: "Trips"), .private, alice
                ),
                (
                    RecordQuery(recordType: "Item", sort: [QuerySort("qty", ascending: false)], resultsLimit: 2),
                    shared, .shared, bob
                ),
            ]
            for (query, zone, database, user) in queries {
                let writer = RecordsAnswerWriter(
                    currentUser: user, desiredKeys: nil, numbersAsStrings: nil, capacity: 0)
                let marker = try await store.queryRecords(query, in: zone, database: database, as: user, into: writer)
                let page = try await store.queryRecords(query, in: zone, database: database, as: user)
                let asRead = try Self.answer(try writer.finish(continuationMarker: marker).data)
                let reference = try Self.answer(
                    try WireCoding.bodyEncoder().encode(
                        RecordsResponse(
                            records: page.records.map { WireRecord(.saved($0), currentUser: user).asAnswered() },
                            continuationMarker: page.continuationMarker)))
                #expect(asRead == reference, "\(query) as \(user)")
                #expect(!asRead.records.isEmpty)
            }
        }
    }
}
