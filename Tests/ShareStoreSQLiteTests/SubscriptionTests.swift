import Foundation
import GRDB
import ShareKit
import ShareStoreSQLite
import Testing

/// Subscriptions as their owners notice them: kept per user and database, refused as CloudKit refuses
/// them, and firing notifications on the changes they match, whoever writes.
@Suite struct SubscriptionTests {
    let temp: TemporaryStore
    var store: SQLiteStore { temp.store }
    let zone = ZoneID(zoneName: "Lists")

    init() throws { temp = try TemporaryStore() }

    private func user(_ name: String) async throws -> UserRecordName {
        try await store.signIn(email: "\(name)@example.com", name: nil).recordName
    }

    private func save(_ subscriptions: [Subscription], in database: DatabaseScope = .private, as user: UserRecordName)
        async throws -> [SubscriptionOutcome]
    {
        try await store.modifySubscriptions(subscriptions.map { .init(.create, $0) }, in: database, as: user)
    }

    private func drain(_ channel: NotificationChannel, as user: UserRecordName) async throws
        -> [SubscriptionNotification]
    {
        try await store.receiveNotifications(on: channel, limit: 100, as: user)
    }

    @Test("subscriptions are listed, looked up, updated and deleted per user and database")
    func keepingSubscriptions() async throws {
        let alice = try await user("alice")
        let bob = try await user("bob")
        let saved = try await save(
            [.query("todos", recordType: "Todo", zoneID: zone, firesOn: [.create]), .zone("lists", zone)], as: alice)
        #expect(saved.map(\.error) == [nil, nil])
        #expect(try await store.listSubscriptions(in: .private, as: alice).map(\.subscriptionID) == ["lists", "todos"])
        #expect(try await store.listSubscriptions(in: .private, as: bob).isEmpty)
        #expect(try await store.listSubscriptions(in: .shared, as: alice).isEmpty)

        let looked = try await store.lookupSubscriptions(["todos", "nope"], in: .private, as: alice)
        #expect(looked[0] == .saved(.query("todos", recordType: "Todo", zoneID: zone, firesOn: [.create])))
        #expect(looked[1].error?.code == .notFound)

        let updated = try await store.modifySubscriptions(
            [.init(.update, .query("todos", recordType: "Todo", zoneID: zone, firesOn: [.create, .delete]))],
            in: .private, as: alice)
        #expect(updated[0] == .saved(.query("todos", recordType: "Todo", zoneID: zone, firesOn: [.delete, .create])))

        let deleted = try await store.modifySubscriptions(
            [.delete("lists"), .delete("lists")], in: .private, as: alice)
        #expect(deleted[0] == .deleted(subscriptionID: "lists"))
        #expect(deleted[1].error?.code == .notFound)
        #expect(try await store.listSubscriptions(in: .private, as: alice).map(\.subscriptionID) == ["todos"])
    }

    @Test("a refused subscription operation says why and does not stop the others")
    func refusals() async throws {
        let alice = try await user("alice")
        let outcomes = try await save(
            [
                .query("a", recordType: "Todo", firesOn: [.create, .update]),
                // Live CloudKit: one query subscription per record type and exact firesOn set.
                .query("b", recordType: "Todo", firesOn: [.update, .create]),
                .query("c", recordType: "Todo", firesOn: [.create]),
                .query("a", recordType: "Note"),
                .query("d", recordType: "Todo", firesOn: []),
            ], as: alice)
        #expect(outcomes.map { $0.error?.code } == [nil, .internalError, nil, .exists, .badRequest])
        #expect(outcomes[1].error?.reason.contains("a already watches Todo") == true)
        let shared = try await save(
            [.zone("z", ZoneID(zoneName: "Lists", ownerRecordName: "_x"))], in: .shared, as: alice)
        #expect(shared[0].error?.code == .badRequest)
        let publicZone = try await save([.database("db")], in: .public, as: alice)
        #expect(publicZone[0].error?.code == .badRequest)
        #expect(try await store.listSubscriptions(in: .private, as: alice).map(\.subscriptionID) == ["a", "c"])
        await #expect(throws: ShareError.self) {
            _ = try await save((0...200).map { .database("s\($0)") }, as: alice)
        }
    }

    @Test("a query subscription fires on the changes it names, with its filters, once per subscription")
    func queryFiring() async throws {
        let alice = try await user("alice")
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: alice)
        _ = try await save(
            [
                .query("created", recordType: "Todo", zoneID: zone, firesOn: [.create], alertBody: "new todo"),
                .query(
                    "eggsChanged", recordType: "Todo",
                    filters: [QueryFilter("title", .beginsWith, .string("Egg"))], zoneID: zone,
                    firesOn: [.update, .delete]),
                .query("notes", recordType: "Note", zoneWide: true, firesOn: [.create]),
                .query("elsewhere", recordType: "Todo", firesOn: [.create, .update]),
            ], as: alice)
        let channel = try await store.openNotificationChannel(apnsEnvironment: "development", as: alice)

        _ = try await store.create(todo("eggs", in: zone, title: "Eggs"), in: zone, as: alice)
        var got = try await drain(channel, as: alice)
        #expect(got.map(\.subscriptionID) == ["created"])
        #expect(got.first?.reason == .create)
        #expect(got.first?.recordName == "eggs")
        #expect(got.first?.alertBody == "new todo")
        #expect(got.first?.zoneID == zone)

        var eggs = try #require(try await store.record("eggs", in: zone, as: alice))
        eggs.fields["title"] = .string("Eggs, a dozen")
        _ = try await store.modifyRecords([.init(.update, eggs)], in: zone, database: .private, atomic: true, as: alice)
        got = try await drain(channel, as: alice)
        #expect(got.map(\.subscriptionID) == ["eggsChanged"])
        #expect(got.first?.reason == .update)

        // Not matching the filter: nothing.
        _ = try await store.create(todo("milk", in: zone, title: "Milk"), in: zone, as: alice)
        var milk = try #require(try await store.record("milk", in: zone, as: alice))
        milk.fields["title"] = .string("Oat milk")
        _ = try await store.modifyRecords([.init(.update, milk)], in: zone, database: .private, atomic: true, as: alice)
        #expect(try await drain(channel, as: alice).map(\.subscriptionID) == ["created"])

        _ = try await store.modifyRecords(
            [.init(.forceDelete, try #require(try await store.record("eggs", in: zone, as: alice)))], in: zone,
            database: .private, atomic: true, as: alice)
        got = try await drain(channel, as: alice)
        #expect(got.map(\.subscriptionID) == ["eggsChanged"])
        #expect(got.first?.reason == .delete)

        // zoneWide watches every zone; without a zone a subscription watches the default zone.
        let note = Record(recordName: "n1", recordType: "Note", zoneID: zone, fields: ["text": .string("hi")])
        _ = try await store.create(note, in: zone, as: alice)
        _ = try await store.create(todo("t", in: .defaultZone, title: "T"), in: .defaultZone, as: alice)
        got = try await drain(channel, as: alice)
        #expect(got.map(\.subscriptionID) == ["notes", "elsewhere"])
        // Each notification is delivered once.
        #expect(try await drain(channel, as: alice).isEmpty)
    }

    @Test("one change matching several subscriptions gives one notification each, with one notification ID")
    func severalSubscriptions() async throws {
        let alice = try await user("alice")
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: alice)
        _ = try await save(
            [.query("q", recordType: "Todo", zoneID: zone, firesOn: [.create]), .zone("z", zone), .database("d")],
            as: alice)
        let channel = try await store.openNotificationChannel(apnsEnvironment: "development", as: alice)
        _ = try await store.modifyRecords(
            [.init(.create, todo("a", in: zone, title: "A")), .init(.create, todo("b", in: zone, title: "B"))],
            in: zone, database: .private, atomic: true, as: alice)
        let got = try await drain(channel, as: alice)
        // One per record for the query subscription; one per call for zone and database subscriptions.
        #expect(got.map(\.subscriptionID).sorted() == ["d", "q", "q", "z"])
        #expect(Set(got.filter { $0.kind == .query }.map(\.recordName)) == ["a", "b"])
        #expect(got.first { $0.kind == .zone }?.zoneID == zone)
    }

    @Test("firesOnce removes the subscription after it fires")
    func firesOnce() async throws {
        let alice = try await user("alice")
        _ = try await save([.query("once", recordType: "Todo", firesOn: [.create], firesOnce: true)], as: alice)
        let channel = try await store.openNotificationChannel(apnsEnvironment: "development", as: alice)
        _ = try await store.create(todo("a", in: .defaultZone, title: "A"), in: .defaultZone, as: alice)
        _ = try await store.create(todo("b", in: .defaultZone, title: "B"), in: .defaultZone, as: alice)
        #expect(try await drain(channel, as: alice).map(\.recordName) == ["a"])
        #expect(try await store.listSubscriptions(in: .private, as: alice).isEmpty)
    }

    @Test("a participant writing into the owner's shared zone notifies the owner and the other participants")
    func participantWrite() async throws {
        let alice = try await user("alice")
        let bob = try await user("bob")
        let carol = try await user("carol")
        let dave = try await user("dave")
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: alice)
        var share = Share.zoneWide(zone, title: "Lists")
        share.participants = [
            Participant(userRecordName: bob, permission: .readWrite),
            Participant(userRecordName: carol, permission: .readOnly),
            Participant(userRecordName: dave, permission: .readOnly),
        ]
        let saved = try #require(
            try await store.modifyRecords(
                [.init(.create, share: share)], in: zone, database: .private, atomic: true, as: alice)[0].share)
        _ = try await store.acceptShare(url: try #require(saved.url), as: bob)
        _ = try await store.acceptShare(url: try #require(saved.url), as: carol)
        // Dave has not accepted: he hears nothing.
        _ = try await save([.database("private-changes")], as: alice)
        _ = try await save([.database("shared-changes")], in: .shared, as: carol)
        _ = try await save([.database("shared-changes")], in: .shared, as: dave)
        let alices = try await store.openNotificationChannel(apnsEnvironment: "development", as: alice)
        let carols = try await store.openNotificationChannel(apnsEnvironment: "development", as: carol)
        let daves = try await store.openNotificationChannel(apnsEnvironment: "development", as: dave)

        let sharedZone = ZoneID(zoneName: "Lists", ownerRecordName: alice)
        _ = try await store.create(todo("eggs", in: sharedZone, title: "Eggs"), in: sharedZone, .shared, as: bob)

        let toAlice = try await drain(alices, as: alice)
        #expect(toAlice.map(\.subscriptionID) == ["private-changes"])
        #expect(toAlice.first?.database == .private)
        #expect(toAlice.first?.changedBy == bob)
        let toCarol = try await drain(carols, as: carol)
        #expect(toCarol.map(\.subscriptionID) == ["shared-changes"])
        #expect(toCarol.first?.database == .shared)
        #expect(toCarol.first?.zoneID == sharedZone)
        #expect(try await drain(daves, as: dave).isEmpty)
        // A channel is its user's: another user cannot read it.
        await #expect(throws: ShareError.self) {
            _ = try await store.receiveNotifications(on: alices, limit: 1, as: bob)
        }
    }

    @Test("a channel delivers only what happened after it was opened, and survives reopening the store")
    func channelsStartNow() async throws {
        let alice = try await user("alice")
        _ = try await save([.database("d")], as: alice)
        _ = try await store.create(todo("before", in: .defaultZone, title: "B"), in: .defaultZone, as: alice)
        let channel = try await store.openNotificationChannel(apnsEnvironment: "production", as: alice)
        #expect(channel.apnsEnvironment == "production")
        #expect(try await drain(channel, as: alice).isEmpty)
        _ = try await store.create(todo("after", in: .defaultZone, title: "A"), in: .defaultZone, as: alice)
        let reopened = try temp.reopen()
        #expect(try await reopened.receiveNotifications(on: channel, limit: 5, as: alice).count == 1)
        await #expect(throws: ShareError.self) {
            _ = try await store.openNotificationChannel(apnsEnvironment: "staging", as: alice)
        }
    }

    /// Alice's zone with a `trip` record shared (hierarchy, read-only) with Bob, who accepted and holds a shared
    /// database subscription, and `besides`; Bob's notification channel, opened last.
    private func tripSharedWithBob(_ alice: UserRecordName, _ bob: UserRecordName, besides: [Record]) async throws
        -> NotificationChannel
    {
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: alice)
        _ = try await store.modifyRecords(
            [.init(.create, todo("trip", in: zone, title: "Trip"))] + besides.map { .init(.create, $0) } + [
                .init(
                    .create,
                    share: Share(
                        recordName: "", zoneID: zone, rootRecordName: "trip",
                        participants: [Participant(userRecordName: bob, permission: .readOnly)]))
            ], in: zone, database: .private, atomic: true, as: alice)
        let shareName = try #require(try await store.record("trip", in: zone, as: alice)?.shareRecordName)
        let share = try #require(
            try await store.lookupRecords([shareName], in: zone, database: .private, as: alice)[0].share)
        _ = try await store.acceptShare(url: try #require(share.url), as: bob)
        _ = try await save([.database("shared")], in: .shared, as: bob)
        return try await store.openNotificationChannel(apnsEnvironment: "development", as: bob)
    }

    @Test("a hierarchy's participant hears only of the records in the hierarchy shared with them")
    func hierarchyParticipant() async throws {
        let alice = try await user("alice")
        let bob = try await user("bob")
        let channel = try await tripSharedWithBob(alice, bob, besides: [todo("private", in: zone, title: "Mine")])
        _ = try await store.create(todo("leg", in: zone, title: "Leg", parent: "trip"), in: zone, as: alice)
        #expect(try await drain(channel, as: bob).count == 1)
        _ = try await store.create(todo("secret", in: zone, title: "S", parent: "private"), in: zone, as: alice)
        #expect(try await drain(channel, as: bob).isEmpty)
    }

    @Test("public query subscriptions hear every user's public writes")
    func publicDatabase() async throws {
        let alice = try await user("alice")
        let bob = try await user("bob")
        let publicZone = ZoneID(zoneName: defaultZoneName)
        _ = try await save(
            [.query("cards", recordType: "Card", firesOn: [.create, .update])], in: .public, as: alice)
        let channel = try await store.openNotificationChannel(apnsEnvironment: "development", as: alice)
        let card = Record(recordName: "bob-card", recordType: "Card", zoneID: publicZone, fields: ["n": .string("B")])
        _ = try await store.create(card, in: publicZone, .public, as: bob)
        let got = try await drain(channel, as: alice)
        #expect(got.map(\.recordName) == ["bob-card"])
        #expect(got.first?.database == .public)
        #expect(got.first?.changedBy == bob)
    }

    /// Alice's zone shared zone-wide with Bob (accepted) and Carol (invited): the share as saved.
    private func sharedLists(_ alice: UserRecordName, _ bob: UserRecordName, _ carol: UserRecordName) async throws
        -> Share
    {
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: alice)
        var share = Share.zoneWide(zone, title: "Lists")
        share.participants = [
            Participant(userRecordName: bob, permission: .readWrite),
            Participant(userRecordName: carol, permission: .readOnly),
        ]
        let saved = try #require(
            try await store.modifyRecords(
                [.init(.create, share: share)], in: zone, database: .private, atomic: true, as: alice)[0].share)
        _ = try await store.acceptShare(url: try #require(saved.url), as: bob)
        return saved
    }

    @Test("accepting, leaving and changing a share and deleting a shared zone notify the owner and the participants")
    func zoneLevelChanges() async throws {
        let alice = try await user("alice")
        let bob = try await user("bob")
        let carol = try await user("carol")
        let share = try await sharedLists(alice, bob, carol)
        _ = try await save([.database("mine"), .zone("lists", zone)], as: alice)
        _ = try await save([.database("theirs")], in: .shared, as: bob)
        _ = try await save([.database("theirs")], in: .shared, as: carol)
        let alices = try await store.openNotificationChannel(apnsEnvironment: "development", as: alice)
        let bobs = try await store.openNotificationChannel(apnsEnvironment: "development", as: bob)
        let carols = try await store.openNotificationChannel(apnsEnvironment: "development", as: carol)

        // Carol accepts: a zone appears in her shared database, and Alice's share changed.
        _ = try await store.acceptShare(url: try #require(share.url), as: carol)
        #expect(try await drain(alices, as: alice).map(\.subscriptionID).sorted() == ["lists", "mine"])
        #expect(try await drain(carols, as: carol).map(\.subscriptionID) == ["theirs"])
        #expect(try await drain(bobs, as: bob).isEmpty)

        // Alice removes Carol from the share: Carol's shared database loses the zone; Bob's stays as it was,
        // but the share he is in changed.
        var fewer = try #require(
            try await store.lookupRecords([share.recordName], in: zone, database: .private, as: alice)[0].share)
        fewer.participants.removeAll { $0.userRecordName == carol }
        _ = try await store.modifyRecords(
            [.init(.update, share: fewer)], in: zone, database: .private, atomic: true, as: alice)
        #expect(try await drain(alices, as: alice).map(\.subscriptionID).sorted() == ["lists", "mine"])
        #expect(try await drain(carols, as: carol).map(\.subscriptionID) == ["theirs"])
        #expect(try await drain(bobs, as: bob).map(\.subscriptionID) == ["theirs"])

        // Bob leaves.
        try await store.leaveShare(
            recordName: share.recordName, in: ZoneID(zoneName: "Lists", ownerRecordName: alice), as: bob)
        #expect(try await drain(alices, as: alice).map(\.subscriptionID).sorted() == ["lists", "mine"])
        #expect(try await drain(bobs, as: bob).map(\.subscriptionID) == ["theirs"])
        #expect(try await drain(carols, as: carol).isEmpty)

    }

    @Test("deleting a shared zone notifies the owner's subscriptions and the accepted participants'")
    func deletingASharedZone() async throws {
        let alice = try await user("alice")
        let bob = try await user("bob")
        let carol = try await user("carol")
        _ = try await sharedLists(alice, bob, carol)
        _ = try await save([.database("mine"), .zone("lists", zone)], as: alice)
        _ = try await save([.database("theirs")], in: .shared, as: bob)
        _ = try await save([.database("theirs")], in: .shared, as: carol)
        let alices = try await store.openNotificationChannel(apnsEnvironment: "development", as: alice)
        let bobs = try await store.openNotificationChannel(apnsEnvironment: "development", as: bob)
        let carols = try await store.openNotificationChannel(apnsEnvironment: "development", as: carol)
        _ = try await store.modifyZones([.init(.delete, zone)], in: .private, as: alice)
        let toAlice = try await drain(alices, as: alice)
        #expect(toAlice.map(\.subscriptionID).sorted() == ["lists", "mine"])
        #expect(toAlice.allSatisfy { $0.zoneID == zone && $0.recordName == nil })
        let toBob = try await drain(bobs, as: bob)
        #expect(toBob.map(\.subscriptionID) == ["theirs"])
        #expect(toBob.first?.zoneID == ZoneID(zoneName: "Lists", ownerRecordName: alice))
        // Carol never accepted: the zone was never in her shared database.
        #expect(try await drain(carols, as: carol).isEmpty)
    }

    @Test("a record moved out of a shared hierarchy notifies the participant who could see it")
    func movedOutOfTheHierarchy() async throws {
        let alice = try await user("alice")
        let bob = try await user("bob")
        let channel = try await tripSharedWithBob(
            alice, bob,
            besides: [todo("home", in: zone, title: "Home"), todo("leg", in: zone, title: "Leg", parent: "trip")])
        var leg = try #require(try await store.record("leg", in: zone, as: alice))
        leg.parent = "home"
        _ = try await store.modifyRecords([.init(.update, leg)], in: zone, database: .private, atomic: true, as: alice)
        #expect(try await drain(channel, as: bob).count == 1)
    }

    @Test("notifications are kept until every channel of their recipient delivered them; a user keeps 10 channels")
    func notificationsAreNotKeptForever() async throws {
        let alice = try await user("alice")
        _ = try await save([.database("d")], as: alice)
        let queue = try DatabaseQueue(path: temp.path)
        func kept() throws -> Int {
            try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM notification") ?? -1 }
        }
        // No channel: nothing could ever deliver it, so nothing is kept.
        _ = try await store.create(todo("a", in: .defaultZone, title: "A"), in: .defaultZone, as: alice)
        #expect(try kept() == 0)
        let first = try await store.openNotificationChannel(apnsEnvironment: "development", as: alice)
        let second = try await store.openNotificationChannel(apnsEnvironment: "development", as: alice)
        _ = try await store.create(todo("b", in: .defaultZone, title: "B"), in: .defaultZone, as: alice)
        #expect(try kept() == 1)
        #expect(try await drain(first, as: alice).count == 1)
        #expect(try kept() == 1)  // the second channel has not delivered it yet
        #expect(try await drain(second, as: alice).count == 1)
        #expect(try kept() == 0)
        // Ten more channels close the two oldest: their tokens are not found any more.
        for _ in 0..<10 { _ = try await store.openNotificationChannel(apnsEnvironment: "development", as: alice) }
        await #expect(throws: ShareError.self) { _ = try await drain(first, as: alice) }
        await #expect(throws: ShareError.self) { _ = try await drain(second, as: alice) }
    }

    @Test("a recipient keeps at most 1,000 undelivered notifications, the newest")
    func undeliveredAreCapped() async throws {
        let alice = try await user("alice")
        _ = try await save([.query("todos", recordType: "Todo", firesOn: [.create])], as: alice)
        let channel = try await store.openNotificationChannel(apnsEnvironment: "development", as: alice)
        for batch in 0..<6 {
            _ = try await store.modifyRecords(
                (0..<200).map { .init(.create, todo("t\(batch)-\($0)", in: .defaultZone, title: "T")) },
                in: .defaultZone, database: .private, atomic: false, as: alice)
        }
        var received: [SubscriptionNotification] = []
        while true {
            let batch = try await store.receiveNotifications(on: channel, limit: 200, as: alice)
            received += batch
            if batch.isEmpty { break }
        }
        #expect(received.count == 1000)
        #expect(received.first?.recordName == "t1-0")
        #expect(received.last?.recordName == "t5-199")
    }
}
