import CloudKitWire
import Foundation
import ShareKit
import Testing

/// The JSON of every request kind the HTTP store sends, compared with `Golden/*.json` as text.
@Suite struct RequestGoldenTests {
    static let lists = ZoneID(zoneName: "FamilyLists")
    static let alice = "_alice0000000000000000000000000000"

    static let everyField: [String: FieldValue] = [
        "title": .string("Groceries"),
        "qty": .int64(2),
        "price": .double(4.25),
        "due": .timestamp(1_714_554_000_000),
        "blob": .bytes(Data([0, 1, 2, 254, 255])),
        "list": .reference(Reference(recordName: "groceries", action: .deleteSelf)),
        "photo": .assetID("asset-1"),
        "where": .location(Location(latitude: 45.4642, longitude: 9.19)),
        "tags": .list(elementType: .string, [.string("a"), .string("b")]),
        "counts": .list(elementType: .int64, [.int64(1), .int64(2)]),
        "weights": .list(elementType: .double, [.double(0.5)]),
        "dates": .list(elementType: .timestamp, [.timestamp(0)]),
        "blobs": .list(elementType: .bytes, [.bytes(Data([9]))]),
        "links": .list(
            elementType: .reference, [.reference(Reference(recordName: "milk", zoneID: lists, action: .validate))]),
        "places": .list(elementType: .location, [.location(Location(latitude: 1, longitude: 2))]),
        "photos": .list(elementType: .assetID, [.assetID("asset-2")]),
        "empty": .list(elementType: .string, []),
    ]

    @Test func recordsModify() throws {
        let create = Record(
            recordName: "milk", recordType: "Todo", zoneID: Self.lists, fields: Self.everyField, parent: "groceries")
        let update = Record(
            recordName: "groceries", recordType: "TodoList", zoneID: Self.lists, fields: ["title": .string("Food")],
            changeTag: "tag-7")
        let deletion = Record(recordName: "eggs", recordType: "Todo", zoneID: Self.lists, changeTag: "tag-3")
        var share = Share(
            recordName: "share-groceries", zoneID: Self.lists, rootRecordName: "groceries", title: "Groceries",
            participants: [
                Participant(
                    userRecordName: "_bob", email: "bob@example.com", name: "Bob Builder", permission: .readWrite),
                Participant(userRecordName: "_dana", email: "dana@example.com", acceptance: .accepted),
            ])
        share.ownerRecordName = Self.alice
        let request = ModifyRecordsRequest(
            [.init(.create, create), .init(.update, update), .init(.delete, deletion), .init(.create, share: share)],
            in: Self.lists, atomic: true)
        try WireGolden.files.check(try WireGolden.json(request), against: "records-modify.json")
    }

    @Test func zoneShareModify() throws {
        let share = Share.zoneWide(Self.lists, title: "Family lists", publicPermission: .readOnly)
        let request = ModifyRecordsRequest([.init(.forceReplace, share: share)], in: Self.lists, atomic: false)
        try WireGolden.files.check(try WireGolden.json(request), against: "records-modify-zoneshare.json")
    }

    @Test func recordsLookup() throws {
        let request = LookupRecordsRequest(recordNames: ["groceries", "milk"], zoneID: Self.lists)
        try WireGolden.files.check(try WireGolden.json(request), against: "records-lookup.json")
    }

    @Test func recordsQuery() throws {
        let query = RecordQuery(
            recordType: "Todo", filters: [QueryFilter("done", .equals, .int64(0))], sort: [QuerySort("title")],
            resultsLimit: 200, continuationMarker: "marker-1")
        try WireGolden.files.check(
            try WireGolden.json(QueryRecordsRequest(query, in: Self.lists)), against: "records-query.json")
    }

    @Test func zonesLookupAndModify() throws {
        try WireGolden.files.check(
            try WireGolden.json(LookupZonesRequest([Self.lists, ZoneID(zoneName: "Trips", ownerRecordName: "_bob")])),
            against: "zones-lookup.json")
        try WireGolden.files.check(
            try WireGolden.json(
                ModifyZonesRequest([
                    ZoneOperation(.create, Self.lists), ZoneOperation(.delete, ZoneID(zoneName: "Old")),
                ])),
            against: "zones-modify.json")
    }

    @Test func changes() throws {
        try WireGolden.files.check(
            try WireGolden.json(DatabaseChangesRequest(syncToken: "db-token-1")), against: "changes-database.json")
        try WireGolden.files.check(
            try WireGolden.json(ZoneChangesRequest(zoneID: Self.lists, syncToken: "zone-token-1", resultsLimit: 200)),
            against: "changes-zone.json")
    }

    @Test func usersAndSharesAndSignIn() throws {
        try WireGolden.files.check(
            try WireGolden.json(LookupUsersRequest(emails: ["bob@example.com", "carol@example.com"])),
            against: "users-lookup-email.json")
        try WireGolden.files.check(
            try WireGolden.json(
                ShortGUIDsRequest([ShareURL.shortGUID(from: "https://www.icloud.com/share/0Ab3#Lists")])),
            against: "records-resolve.json")
        try WireGolden.files.check(
            try WireGolden.json(SignInRequest(emailAddress: "bob@example.com", name: "Bob Builder")),
            against: "auth-signin.json")
        let endpoint = WebServicesEndpoint.emulator(
            url: "http://127.0.0.1:8080", apiToken: nil, container: "iCloud.com.example.Lists",
            environment: "development")
        try WireGolden.files.check(
            try WireGolden.json(
                SignInBatchRequest(
                    users: [
                        .init(emailAddress: "bob@example.com", name: "Bob Builder"),
                        .init(emailAddress: "carol@example.com", name: nil),
                    ], createUser: false, for: endpoint)),
            against: "auth-signin-batch.json")
    }

    @Test func everyFieldRoundTrips() throws {
        let record = Record(recordName: "milk", recordType: "Todo", zoneID: Self.lists, fields: Self.everyField)
        let data = try WireCoding.encoder().encode(WireRecord(record))
        let back = try JSONDecoder().decode(WireRecord.self, from: data).record(in: Self.lists)
        #expect(back.fields == record.fields)
        #expect(back.recordType == "Todo")
    }

    @Test func shareRoundTripsWithParticipants() throws {
        var share = Share(
            recordName: "s1", zoneID: Self.lists, rootRecordName: "groceries", title: "G", publicPermission: .none,
            participants: [
                Participant(
                    userRecordName: "_bob", email: "bob@example.com", name: "Mary Ann Smith", role: .administrator,
                    permission: .readWrite, acceptance: .removed)
            ],
            changeTag: "t1", shortGUID: "0Ab3", url: "sharelane://share/0Ab3")
        share.ownerRecordName = Self.alice
        let data = try WireCoding.encoder().encode(WireRecord(share))
        let back = try JSONDecoder().decode(WireRecord.self, from: data).shareValue(in: Self.lists)
        #expect(back == share)
    }
}
