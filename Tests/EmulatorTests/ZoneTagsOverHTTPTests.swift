import Applier
import CloudKitWire
import Foundation
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport
import Testing

/// `Store.zoneTags` over Web Services (the change feed read from the start, keeping the tags) agrees with the
/// embedded store's own reading of its rows, for the owner and for a participant who sees part of a zone.
@Suite(.serialized) struct ZoneTagsOverHTTPTests {
    static let recipe = """
        sharelane: 1
        name: tags
        users: { alice: { email: alice@example.com }, bob: { email: bob@example.com } }
        owner: alice
        zones:
          Lists:
            share: { participants: { bob: read-write } }
            records:
              groceries: { type: TodoList, fields: { title: Groceries } }
              milk: { type: Todo, parent: groceries, fields: { title: Milk } }
          Trips:
            records:
              italy:
                type: Trip
                fields: { title: Italy }
                share: { participants: { bob: read-only } }
              rome: { type: Stop, parent: italy, fields: { title: Rome } }
              notes: { type: Note, fields: { text: "not shared" } }
        """

    @Test("the tags over http are the embedded store's, as owner and as participant; a missing zone is nil")
    func tagsAgree() async throws {
        let recipe = try RecipeLoader(environment: [:]).load(yaml: Self.recipe, file: "tags.yaml")
        let scratch = try TemporaryDirectory("zone-tags")
        let path = scratch.file("serve.sqlite")
        try await EmulatorHarness.withEmulator(storePath: path) { base in
            let http = EmulatorHarness.store(base, for: recipe)
            let plan = try await Planner(store: http, logger: EmulatorHarness.quiet).plan(recipe)
            let report = try await Applier(store: http, logger: EmulatorHarness.quiet).apply(plan)
            #expect(report.failures == [])
            // Alice deletes a record, so that the feed holds a deletion too.
            let local = try SQLiteStore(path: path, logger: EmulatorHarness.quiet)
            let alice = try await http.signIn(email: "alice@example.com", name: nil).recordName
            let bob = try await http.signIn(email: "bob@example.com", name: nil).recordName
            _ = try await http.modifyRecords(
                [
                    RecordOperation(
                        .forceDelete, Record(recordName: "notes", recordType: "Note", zoneID: ZoneID(zoneName: "Trips"))
                    )
                ],
                in: ZoneID(zoneName: "Trips"), database: .private, atomic: true, as: alice)
            for zone in ["Lists", "Trips"] {
                let overHTTP = try #require(try await http.zoneTags(ZoneID(zoneName: zone), in: .private, as: alice))
                let embedded = try #require(try await local.zoneTags(ZoneID(zoneName: zone), in: .private, as: alice))
                #expect(overHTTP.records == embedded.records, "\(zone)")
                #expect(overHTTP.shares == embedded.shares, "\(zone)")
                #expect(!embedded.records.isEmpty && embedded.shares.count == 1, "\(zone): \(embedded)")
                let shared = ZoneID(zoneName: zone, ownerRecordName: alice)
                let bobOverHTTP = try #require(try await http.zoneTags(shared, in: .shared, as: bob))
                let bobEmbedded = try #require(try await local.zoneTags(shared, in: .shared, as: bob))
                #expect(bobOverHTTP.records == bobEmbedded.records, "\(zone) as bob")
                #expect(bobOverHTTP.shares.map(\.recordName) == bobEmbedded.shares.map(\.recordName), "\(zone) as bob")
            }
            let trips = try #require(try await local.zoneTags(ZoneID(zoneName: "Trips"), in: .private, as: alice))
            #expect(trips.records["notes"] == nil, "a deleted record has no tag")
            let bobTrips = try #require(
                try await local.zoneTags(ZoneID(zoneName: "Trips", ownerRecordName: alice), in: .shared, as: bob))
            #expect(Set(bobTrips.records.keys) == ["italy", "rome"], "bob sees the shared hierarchy only")
            let zoneIDs = ["Lists", "Nowhere", "Trips"].map { ZoneID(zoneName: $0) }
            let several = try await local.zoneTags(zoneIDs, in: .private, as: alice)
            #expect(several.map { $0 == nil } == [false, true, false], "a zone that does not exist is nil")
            #expect(
                try await http.zoneTags(zoneIDs, in: .private, as: alice).map { $0?.records }
                    == several.map { $0?.records })
            #expect(try await http.zoneTags(ZoneID(zoneName: "Nowhere"), in: .private, as: alice) == nil)
            #expect(try await local.zoneTags(ZoneID(zoneName: "Nowhere"), in: .private, as: alice) == nil)
        }
    }
}
