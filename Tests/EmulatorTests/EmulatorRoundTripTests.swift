import CloudKitWire
import Foundation
import ShareKit
import SharelaneTestSupport
import ShareStoreSQLite
import Testing

/// The HTTP store against the emulator over a SQLite file: what goes in comes back, as the embedded store
/// answers it.
@Suite(.serialized) struct EmulatorRoundTripTests {
    static let everyField: [String: FieldValue] = [
        "title": .string("Groceries"), "qty": .int64(2), "price": .double(4.25), "due": .timestamp(1_714_554_000_000),
        "blob": .bytes(Data([0, 1, 254, 255])), "photo": .assetID("asset-1"),
        "where": .location(Location(latitude: 45.4642, longitude: 9.19)),
        "tags": .list(elementType: .string, [.string("a"), .string("b")]),
        "counts": .list(elementType: .int64, []),
    ]

    @Test(
        "records/modify answers only the desiredKeys fields; the client asks for none when it creates records, and still returns them whole"
    )
    func modifyAnswersDesiredKeys() async throws {
        try await EmulatorHarness.withEmulator { base in
            let (token, _) = try await EmulatorHarness.signIn(base, "alice@example.com")
            let body =
                #"{"operations":[{"operationType":"create","record":{"recordName":"a","recordType":"T","#
                + #""fields":{"x":{"value":"one","type":"STRING"},"y":{"value":2,"type":"INT64"}}}}],"desiredKeys":["y"]}"#
            let answer = try await EmulatorHarness.raw(
                base, EmulatorHarness.databasePath("private", "records/modify"),
                query: ["ckAPIToken": EmulatorHarness.apiToken, "ckWebAuthToken": token], body: body)
            #expect(answer.status == 200, "\(answer.text)")
            let records = answer.json["records"] as? [[String: Any]] ?? []
            #expect((records.first?["fields"] as? [String: Any]).map { Array($0.keys) } == ["y"])

            let store = EmulatorHarness.store(base)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            let fields: [String: FieldValue] = ["title": .string("Milk"), "qty": .int64(2)]
            let outcomes = try await store.modifyRecords(
                [
                    RecordOperation(
                        .create, Record(recordName: "milk", recordType: "Todo", zoneID: .defaultZone, fields: fields))
                ],
                in: .defaultZone, database: .private, atomic: false, as: alice)
            #expect(outcomes.first?.savedRecord?.fields == fields)
            #expect(outcomes.first?.savedRecord?.changeTag != nil)
            let stored = try await store.lookupRecords(["milk"], in: .defaultZone, database: .private, as: alice)
            #expect(stored.first?.savedRecord?.fields == fields)
        }
    }

    @Test(
        "requests as one user go one at a time per token chain; busy, the store signs in again, up to --parallelism chains"
    )
    func concurrentRequestsAsOneUser() async throws {
        try await EmulatorHarness.withEmulator { base in
            let store = EmulatorHarness.store(base, parallelism: 3)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            let zones = (1...6).map { ZoneID(zoneName: "Z\($0)") }
            _ = try await store.modifyZones(zones.map { ZoneOperation(.create, $0) }, in: .private, as: alice)

            // One after another: the one chain is enough, and nothing else is sent.
            var before = store.requestCount
            for zone in zones.prefix(3) {
                let outcomes = try await store.modifyRecords(
                    [
                        RecordOperation(
                            .create, Record(recordName: "a", recordType: "T", zoneID: zone, fields: ["n": .int64(1)]))
                    ],
                    in: zone, database: .private, atomic: false, as: alice)
                #expect(outcomes.first?.error == nil)
            }
            #expect(store.requestCount - before == 3)

            // Six at once: each succeeds with a token of its own chain; at most two more sign-ins.
            before = store.requestCount
            try await withThrowingTaskGroup(of: RecordOutcome?.self) { group in
                for zone in zones {
                    group.addTask {
                        try await store.modifyRecords(
                            [
                                RecordOperation(
                                    .create,
                                    Record(recordName: "b", recordType: "T", zoneID: zone, fields: ["n": .int64(2)]))
                            ],
                            in: zone, database: .private, atomic: false, as: alice
                        ).first
                    }
                }
                for try await outcome in group { #expect(outcome?.error == nil) }
            }
            let sent = store.requestCount - before
            #expect(sent >= 6 && sent <= 8)
            for zone in zones {
                let found = try await store.lookupRecords(["b"], in: zone, database: .private, as: alice)
                #expect(found.first?.savedRecord?.fields["n"] == .int64(2))
            }
        }
    }

    @Test("acceptShares sends one records/accept request for all the shares, with one result per share")
    func acceptingSeveralSharesInOneRequest() async throws {
        try await EmulatorHarness.withEmulator { base in
            let store = EmulatorHarness.store(base)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
            let carol = try await store.signIn(email: "carol@example.com", name: nil).recordName
            var urls: [String] = []
            for (name, invited) in [("One", bob), ("Two", carol), ("Three", bob)] {
                let zone = ZoneID(zoneName: name)
                _ = try await store.modifyZones([ZoneOperation(.create, zone)], in: .private, as: alice)
                var share = Share.zoneWide(zone, title: name)
                share.participants = [Participant(userRecordName: invited, permission: .readWrite)]
                let saved = try await store.modifyRecords(
                    [RecordOperation(.create, share: share)], in: zone, database: .private, atomic: true, as: alice)
                urls.append(try #require(saved.first?.savedShare?.url))
            }
            _ = try await store.listZones(in: .shared, as: bob)  // Bob's session is open before counting.
            let before = store.requestCount
            let results = try await store.acceptShares(urls: urls, as: bob)
            #expect(store.requestCount - before == 1)
            #expect(results.count == 3)
            #expect((try? results[0].get())?.participant?.acceptance == .accepted)
            if case .failure(let error) = results[1] {
                #expect(error.code == .accessDenied)
            } else {
                Issue.record("Bob accepted a share he was not invited to")
            }
            #expect((try? results[2].get())?.zoneID.zoneName == "Three")
            #expect(
                try await store.listZones(in: .shared, as: bob).map(\.zoneID.zoneName).sorted() == ["One", "Three"])
        }
    }

    @Test func recordsZonesAndSharesRoundTrip() async throws {
        let scratch = try TemporaryDirectory("emulator")
        let path = scratch.file("serve.sqlite")
        try await EmulatorHarness.withEmulator(storePath: path) { base in
            let store = EmulatorHarness.store(base)
            #expect(store.capabilities.actsAsAnyUser)
            let alice = try await store.signIn(email: "alice@example.com", name: "Alice Appleseed").recordName
            let bob = try await store.signIn(email: "bob@example.com", name: "Bob Builder").recordName
            // The emulator hands out the embedded store's user names.
            #expect(alice == StableName.userRecordName(email: "alice@example.com"))
            #expect(try await store.currentUser(as: bob).name == "Bob Builder")
            // As on Apple's service, users/lookup/email finds only discoverable users.
            var found = try await store.lookupUsers(emails: ["BOB@example.com", "nobody@example.com"], as: alice)
            #expect(found.map { $0?.recordName } == [nil, nil])
            try await store.setDiscoverability(UserDiscoverability(discoverable: true), as: bob)
            found = try await store.lookupUsers(emails: ["BOB@example.com", "nobody@example.com"], as: alice)
            #expect(found.map { $0?.recordName } == [bob, nil])

            let lists = ZoneID(zoneName: "FamilyLists")
            let zones = try await store.modifyZones([ZoneOperation(.create, lists)], in: .private, as: alice)
            #expect(try zones[0].get().zoneID.zoneName == "FamilyLists")
            #expect(try await store.listZones(in: .private, as: alice).map(\.zoneID.zoneName).contains("FamilyLists"))

            let groceries = Record(
                recordName: "groceries", recordType: "TodoList", zoneID: lists, fields: Self.everyField)
            let milk = Record(
                recordName: "milk", recordType: "Todo", zoneID: lists,
                fields: ["title": .string("Milk"), "list": .reference(Reference(recordName: "groceries"))],
                parent: "groceries")
            let share = Share(
                recordName: "", zoneID: lists, rootRecordName: "groceries", title: "Groceries",
                participants: [Participant(userRecordName: bob, email: "bob@example.com", permission: .readOnly)])
            let saved = try await store.modifyRecords(
                [.init(.create, groceries), .init(.create, milk), .init(.create, share: share)], in: lists,
                database: .private, atomic: true, as: alice)
            let savedGroceries = try #require(saved[0].savedRecord)
            #expect(savedGroceries.fields == Self.everyField)
            #expect(savedGroceries.changeTag != nil)
            #expect(savedGroceries.created?.userRecordName == alice)
            let savedShare = try #require(saved[2].savedShare)
            #expect(savedShare.rootRecordName == "groceries")
            #expect(savedShare.title == "Groceries")
            #expect(savedShare.participants.map(\.userRecordName) == [bob])
            let url = try #require(savedShare.url)

            // What comes over HTTP equals what the embedded store answers for the same file.
            let direct = try SQLiteStore(path: path, logger: EmulatorHarness.quiet)
            let overHTTP = try await store.lookupRecords(
                ["groceries", "milk", savedShare.recordName, "nope"], in: lists, database: .private, as: alice)
            let embedded = try await direct.lookupRecords(
                ["groceries", "milk", savedShare.recordName, "nope"], in: lists, database: .private, as: alice)
            #expect(Array(overHTTP.prefix(3)) == Array(embedded.prefix(3)))
            #expect(overHTTP[3].error?.code == .notFound)

            let page = try await store.queryRecords(
                RecordQuery(recordType: "Todo"), in: lists, database: .private, as: alice)
            #expect(page.records.map(\.recordName) == ["milk"])

            // Bob sees nothing until he accepts.
            #expect(try await store.listZones(in: .shared, as: bob).isEmpty)
            let resolved = try await store.resolveShare(url: url, as: bob)
            #expect(resolved.participant?.acceptance == .pending)
            let accepted = try await store.acceptShare(url: url, as: bob)
            #expect(accepted.participant?.acceptance == .accepted)
            let bobZone = ZoneID(zoneName: "FamilyLists", ownerRecordName: alice)
            #expect(try await store.listZones(in: .shared, as: bob).map(\.zoneID) == [bobZone])
            let bobSees = try await store.lookupRecords(["milk"], in: bobZone, database: .shared, as: bob)
            #expect(bobSees[0].savedRecord?.fields["title"] == .string("Milk"))

            // A read-only participant's write is refused and changes nothing.
            var changed = try #require(bobSees[0].savedRecord)
            changed.fields["title"] = .string("Oat milk")
            let refused = try await store.modifyRecords(
                [.init(.update, changed)], in: bobZone, database: .shared, atomic: false, as: bob)
            #expect(refused[0].error?.code == .accessDenied)
            let after = try await direct.lookupRecords(["milk"], in: lists, database: .private, as: alice)
            #expect(after[0] == embedded[1])

            // Changes, then Bob leaves.
            let changes = try await store.zoneChanges(lists, in: .private, since: nil, resultsLimit: nil, as: alice)
            #expect(Set(changes.changedRecords.map(\.recordName)) == ["groceries", "milk"])
            #expect(changes.changedShares.map(\.recordName) == [savedShare.recordName])
            let databaseChanges = try await store.databaseChanges(in: .private, since: nil, as: alice)
            #expect(
                databaseChanges.changedZones.contains(lists.resolvingOwner(to: alice))
                    || databaseChanges.changedZones.contains(lists))
            try await store.leaveShare(recordName: savedShare.recordName, in: bobZone, as: bob)
            #expect(try await store.listZones(in: .shared, as: bob).isEmpty)
            let left = try await direct.lookupRecords([savedShare.recordName], in: lists, database: .private, as: alice)
            #expect(left[0].savedShareValue?.participants.first?.acceptance == .removed)
        }
    }

    @Test func largeWritesAreSplitAt200Operations() async throws {
        try await EmulatorHarness.withEmulator { base in
            let store = EmulatorHarness.store(base)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            let zone = ZoneID(zoneName: "Bulk")
            _ = try await store.modifyZones([ZoneOperation(.create, zone)], in: .private, as: alice)
            let records = (1...450).map {
                Record(recordName: "r\($0)", recordType: "Item", zoneID: zone, fields: ["n": .int64(Int64($0))])
            }
            let before = store.requestCount
            let outcomes = try await store.modifyRecords(
                records.map { .init(.create, $0) }, in: zone, database: .private, atomic: true, as: alice)
            #expect(store.requestCount - before == 3)
            #expect(outcomes.count == 450)
            #expect(outcomes.allSatisfy { $0.savedRecord != nil })
            var names: [String] = []
            var marker: String?
            repeat {
                let page = try await store.queryRecords(
                    RecordQuery(recordType: "Item", resultsLimit: 200, continuationMarker: marker), in: zone,
                    database: .private, as: alice)
                names += page.records.map(\.recordName)
                marker = page.continuationMarker
            } while marker != nil
            #expect(Set(names).count == 450)
        }
    }

    @Test func aRestartKeepsTheData() async throws {
        let scratch = try TemporaryDirectory("emulator")
        let path = scratch.file("serve.sqlite")
        let zone = ZoneID(zoneName: "Keep")
        let tag = try await EmulatorHarness.withEmulator(storePath: path) { base in
            let store = EmulatorHarness.store(base)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            _ = try await store.modifyZones([ZoneOperation(.create, zone)], in: .private, as: alice)
            let saved = try await store.modifyRecords(
                [
                    .init(
                        .create,
                        Record(recordName: "kept", recordType: "Note", zoneID: zone, fields: ["t": .string("x")]))
                ],
                in: zone, database: .private, atomic: false, as: alice)
            return saved[0].savedRecord?.changeTag
        }
        try await EmulatorHarness.withEmulator(storePath: path) { base in
            let store = EmulatorHarness.store(base)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            let found = try await store.lookupRecords(["kept"], in: zone, database: .private, as: alice)
            #expect(found[0].savedRecord?.fields["t"] == .string("x"))
            #expect(found[0].savedRecord?.changeTag == tag)
        }
    }
}

extension RecordOutcome {
    var savedRecord: Record? {
        if case .saved(let record) = self { return record }
        return nil
    }

    var savedShareValue: Share? {
        if case .savedShare(let share) = self { return share }
        return nil
    }

    var savedShare: Share? { savedShareValue }
}
