import Foundation
import GRDB
import ShareKit
import ShareStoreSQLite
import Testing

/// Accepting, resolving, leaving and re-sharing, as participants notice them.
@Suite struct SharingFlowTests {
    let temp: TemporaryStore
    var store: SQLiteStore { temp.store }
    let zone = ZoneID(zoneName: "Lists")

    init() throws { temp = try TemporaryStore() }

    /// Alice and Bob signed in, and Alice's zone Lists shared whole with Bob, read-write: the share as saved.
    func aliceSharesListsWithBob() async throws -> (alice: UserRecordName, bob: UserRecordName, share: Share) {
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let bob = try await store.signIn(email: "bob@example.com", name: "Bob").recordName
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: alice)
        var share = Share.zoneWide(zone, title: "Lists")
        share.participants = [Participant(userRecordName: "", email: "bob@example.com", permission: .readWrite)]
        let saved = try #require(
            try await store.modifyRecords(
                [.init(.create, share: share)], in: zone, database: .private, atomic: true, as: alice)[0].share)
        return (alice, bob, saved)
    }

    @Test func theSharedDatabaseFollowsAcceptingAndLeaving() async throws {
        let (alice, bob, saved) = try await aliceSharesListsWithBob()
        let url = try #require(saved.url)
        #expect(saved.participants.first?.userRecordName == bob)
        #expect(saved.participants.first?.name == "Bob")

        let start = try await store.databaseChanges(in: .shared, since: nil, as: bob)
        #expect(start.changedZones.isEmpty)
        let resolved = try await store.resolveShare(url: url, as: bob)
        #expect(resolved.zoneID == ZoneID(zoneName: "Lists", ownerRecordName: alice))
        #expect(resolved.participant?.acceptance == .pending)
        await #expect(throws: ShareError.self) {
            try await store.resolveShare(
                url: url, as: try await store.signIn(email: "eve@example.com", name: nil).recordName)
        }

        let accepted = try await store.acceptShare(url: url, as: bob)
        #expect(accepted.participant?.acceptance == .accepted)
        let sharedZone = ZoneID(zoneName: "Lists", ownerRecordName: alice)
        let afterAccept = try await store.databaseChanges(in: .shared, since: start.token, as: bob)
        #expect(afterAccept.changedZones == [sharedZone])
        // Accepting again changes nothing.
        _ = try await store.acceptShare(url: try #require(saved.shortGUID), as: bob)
        let again = try await store.databaseChanges(in: .shared, since: afterAccept.token, as: bob)
        #expect(again.changedZones.isEmpty)

        // Bob writes; Alice sees who did.
        let eggs = try await store.create(todo("eggs", in: sharedZone, title: "Eggs"), in: sharedZone, .shared, as: bob)
        #expect(eggs.record?.zoneID == sharedZone)
        #expect(try await store.record("eggs", in: zone, as: alice)?.created?.userRecordName == bob)

        try await store.leaveShare(recordName: zoneShareRecordName, in: sharedZone, as: bob)
        #expect(try await store.listZones(in: .shared, as: bob).isEmpty)
        let afterLeave = try await store.databaseChanges(in: .shared, since: again.token, as: bob)
        #expect(afterLeave.deletedZones == [sharedZone])
        #expect(
            try await store.share(zoneShareRecordName, in: zone, as: alice)?.participants.first?.acceptance == .removed)
        // A participant who left cannot accept again until invited again.
        await #expect(throws: ShareError.self) { try await store.acceptShare(url: url, as: bob) }
        do {
            _ = try await store.acceptShare(url: url, as: bob)
        } catch let error as ShareError {
            #expect(error.code == .accessDenied)
        }
    }

    @Test("A share says when and by whom it was saved first and last: the owner's save, an acceptance, a departure")
    func shareStamps() async throws {
        let before = Int64(Date().timeIntervalSince1970 * 1000) - 1
        let (alice, bob, saved) = try await aliceSharesListsWithBob()
        let created = try #require(saved.created)
        #expect(created.userRecordName == alice)
        #expect(created.timestamp >= before)
        #expect(saved.modified == created)

        let accepted = try await store.acceptShare(url: try #require(saved.url), as: bob)
        #expect(accepted.share.created == created)
        #expect(accepted.share.modified?.userRecordName == bob)
        let read = try #require(try await store.share(zoneShareRecordName, in: zone, as: alice))
        #expect(read.created == created)
        #expect(read.modified == accepted.share.modified)
        #expect((read.modified?.timestamp ?? 0) >= created.timestamp)

        try await store.leaveShare(
            recordName: zoneShareRecordName, in: ZoneID(zoneName: "Lists", ownerRecordName: alice), as: bob)
        let left = try #require(try await store.share(zoneShareRecordName, in: zone, as: alice))
        #expect(left.created == created)
        #expect(left.modified?.userRecordName == bob)
        #expect(left.changeTag != read.changeTag)

        var retitled = left
        retitled.title = "Family lists"
        let updated = try #require(
            try await store.modifyRecords(
                [.init(.update, share: retitled)], in: zone, database: .private, atomic: true, as: alice)[0].share)
        #expect(updated.created == created)
        #expect(updated.modified?.userRecordName == alice)
    }

    @Test("A share saved by a version that kept no stamps has none when the file is opened, and modified once saved")
    func shareSavedBeforeStamps() async throws {
        let (alice, bob, saved) = try await aliceSharesListsWithBob()
        // The file as the version before wrote it: no stamp columns, and its migrations stop before them.
        let old = try DatabaseQueue(path: temp.path)
        try await old.write { db in
            for column in ["createdAt", "createdBy", "modifiedAt", "modifiedBy"] {
                try db.execute(sql: "ALTER TABLE share DROP COLUMN \(column)")
            }
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier LIKE 'v9:%'")
        }
        try old.close()

        let reopened = try temp.reopen()
        let before = try #require(try await reopened.share(zoneShareRecordName, in: zone, as: alice))
        #expect(before.created == nil)
        #expect(before.modified == nil)
        #expect(before.changeTag == saved.changeTag)
        let accepted = try await reopened.acceptShare(url: try #require(saved.url), as: bob)
        #expect(accepted.share.created == nil)
        #expect(accepted.share.modified?.userRecordName == bob)
        #expect(try await reopened.share(zoneShareRecordName, in: zone, as: alice)?.modified?.userRecordName == bob)
    }

    @Test("The share an acceptance answers is the share as a read gives it afterwards")
    func acceptanceAnswersTheStoredShare() async throws {
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let bob = try await store.signIn(email: "bob@example.com", name: "Bob").recordName
        _ = try await store.signIn(email: "carol@example.com", name: "Carol")
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: alice)
        var share = Share.zoneWide(zone, title: "Lists")
        share.participants = [
            Participant(userRecordName: "", email: "carol@example.com", permission: .readOnly),
            Participant(userRecordName: "", email: "bob@example.com", permission: .readWrite),
        ]
        let saved = try #require(
            try await store.modifyRecords(
                [.init(.create, share: share)], in: zone, database: .private, atomic: true, as: alice)[0].share)

        let url = try #require(saved.url)
        let accepted = try #require(try await store.acceptShares(urls: [url], as: bob).first?.get())
        // The store builds the accepted share without reading it again: it must be what a read gives.
        let read = try await store.resolveShare(url: url, as: bob)
        #expect(accepted == read)
        #expect(accepted.participant?.acceptance == .accepted)
        #expect(accepted.share.changeTag != saved.changeTag)
        let carol = try #require(saved.participants.first?.userRecordName)
        #expect(accepted.share.participant(carol)?.acceptance == .pending)
    }

    @Test("acceptShares accepts each share it can and reports each one it cannot, changing nothing of those")
    func acceptingSeveralSharesAtOnce() async throws {
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
        let carol = try await store.signIn(email: "carol@example.com", name: nil).recordName
        var urls: [String: String] = [:]
        for (name, invited) in [("Lists", bob), ("Trips", bob), ("Secrets", carol)] {
            let zoneID = ZoneID(zoneName: name)
            _ = try await store.modifyZones([.init(.create, zoneID)], in: .private, as: alice)
            var share = Share.zoneWide(zoneID, title: name)
            share.participants = [Participant(userRecordName: invited, permission: .readOnly)]
            let saved = try #require(
                try await store.modifyRecords(
                    [.init(.create, share: share)], in: zoneID, database: .private, atomic: true, as: alice)[0].share)
            urls[name] = saved.url
        }
        let secretsBefore = try #require(
            try await store.share(zoneShareRecordName, in: ZoneID(zoneName: "Secrets"), as: alice))

        let results = try await store.acceptShares(
            urls: [urls["Lists"]!, urls["Secrets"]!, "https://www.icloud.com/share/0nosuchshare", urls["Trips"]!],
            as: bob)

        #expect(results.count == 4)
        #expect((try? results[0].get())?.participant?.acceptance == .accepted)
        #expect(throws: ShareError.self) { try results[1].get() }
        if case .failure(let error) = results[1] { #expect(error.code == .accessDenied) }
        if case .failure(let error) = results[2] { #expect(error.code == .notFound) } else { Issue.record("no error") }
        #expect((try? results[3].get())?.participant?.acceptance == .accepted)
        // Bob sees the two zones he was invited to; the share he was not invited to is as it was.
        let shared = try await store.listZones(in: .shared, as: bob).map(\.zoneID.zoneName).sorted()
        #expect(shared == ["Lists", "Trips"])
        let secretsAfter = try #require(
            try await store.share(zoneShareRecordName, in: ZoneID(zoneName: "Secrets"), as: alice))
        #expect(secretsAfter == secretsBefore)
    }

    /// The calls that span users and zones (an apply's, one transaction each in this store) answer as one
    /// call per user or zone would.
    @Test func callsForManyUsersAndZonesAnswerAsOneCallEach() async throws {
        let signedIn = try await store.signIn([
            UserSignIn(email: "alice@example.com"), UserSignIn(email: " Bob@Example.com", name: "Bob"),
            UserSignIn(email: "not an address"), UserSignIn(email: "carol@example.com"),
        ])
        #expect(signedIn.count == 4)
        let (alice, bob, carol) = (
            try signedIn[0].get().recordName, try signedIn[1].get().recordName, try signedIn[3].get().recordName
        )
        #expect(try signedIn[1].get().name == "Bob")
        if case .failure(let error) = signedIn[2] {
            #expect(error.code == .badRequest)
        } else {
            Issue.record("signed in")
        }
        #expect(try await store.currentUser(as: bob).email == "bob@example.com")

        // Two zones in one write; a third that does not exist fails alone.
        let lists = ZoneID(zoneName: "Lists")
        let trips = ZoneID(zoneName: "Trips")
        _ = try await store.modifyZones([.init(.create, lists), .init(.create, trips)], in: .private, as: alice)
        var listsShare = Share.zoneWide(lists, title: "Lists")
        listsShare.participants = [
            Participant(userRecordName: bob, permission: .readWrite),
            Participant(userRecordName: carol, permission: .readOnly),
        ]
        var tripsShare = Share.zoneWide(trips, title: "Trips")
        tripsShare.participants = [Participant(userRecordName: bob, permission: .readOnly)]
        let written = await store.modifyRecords(
            [
                ZoneWrite(
                    [.init(.create, todo("milk", in: lists, title: "Milk")), .init(.create, share: listsShare)],
                    in: lists, database: .private),
                ZoneWrite(
                    [.init(.create, todo("x", in: ZoneID(zoneName: "Nowhere"), title: "X"))],
                    in: ZoneID(zoneName: "Nowhere"), database: .private),
                ZoneWrite([.init(.create, share: tripsShare)], in: trips, database: .private),
            ], as: alice)
        #expect(written.count == 3)
        let listsOutcomes = try written[0].get()
        #expect(listsOutcomes.count == 2 && listsOutcomes.allSatisfy { $0.error == nil })
        #expect(try written[1].get().first?.error?.code == .zoneNotFound)
        #expect(try await store.record("milk", in: lists, as: alice)?.fields["title"] == .string("Milk"))
        let listsURL = try #require(listsOutcomes[1].share?.url)
        let tripsURL = try #require(try written[2].get().first?.share?.url)

        // Bob and Carol accept in one call; both accept Lists, so the second answer shows the first's too.
        let accepted = try await store.acceptShares([
            ShareAcceptances(user: bob, urls: [listsURL, "https://www.icloud.com/share/0nosuchshare", tripsURL]),
            ShareAcceptances(user: carol, urls: [listsURL, tripsURL]),
        ])
        #expect(accepted.count == 2)
        #expect(try accepted[0][0].get().participant?.acceptance == .accepted)
        if case .failure(let error) = accepted[0][1] {
            #expect(error.code == .notFound)
        } else {
            Issue.record("no error")
        }
        #expect(try accepted[0][2].get().participant?.acceptance == .accepted)
        let carolsLists = try accepted[1][0].get().share
        #expect(carolsLists.participants.allSatisfy { $0.acceptance == .accepted })
        if case .failure(let error) = accepted[1][1] {
            #expect(error.code == .accessDenied)
        } else {
            Issue.record("accepted")
        }
        // What the answers say is what the store holds (the zone named as its owner names it).
        var ownersView = carolsLists
        ownersView.zoneID = lists
        #expect(try await store.share(zoneShareRecordName, in: lists, as: alice) == ownersView)
        #expect(try await store.listZones(in: .shared, as: bob).map(\.zoneID.zoneName).sorted() == ["Lists", "Trips"])
        #expect(try await store.listZones(in: .shared, as: carol).map(\.zoneID.zoneName) == ["Lists"])
    }

    @Test func theOwnerRemovesAParticipantAndStopsSharing() async throws {
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: alice)
        var share = Share.zoneWide(zone)
        share.participants = [Participant(userRecordName: bob, permission: .readOnly)]
        let saved = try #require(
            try await store.modifyRecords(
                [.init(.create, todo("milk", in: zone, title: "Milk")), .init(.create, share: share)], in: zone,
                database: .private, atomic: true, as: alice)[1].share)
        _ = try await store.acceptShare(url: try #require(saved.url), as: bob)
        let sharedZone = ZoneID(zoneName: "Lists", ownerRecordName: alice)
        #expect(try await store.record("milk", in: sharedZone, .shared, as: bob) != nil)

        // Accepting changed the share (its change tag too); changing Bob's permission keeps him accepted.
        var upgraded = try #require(try await store.share(zoneShareRecordName, in: zone, as: alice))
        #expect(upgraded.changeTag != saved.changeTag)
        upgraded.participants[0].permission = .readWrite
        let up = try await store.modifyRecords(
            [.init(.update, share: upgraded)], in: zone, database: .private, atomic: true, as: alice)
        #expect(up[0].share?.participants.map(\.acceptance) == [.accepted])
        #expect(up[0].share?.participants.map(\.permission) == [.readWrite])
        // Saving with the stale tag conflicts.
        let stale = try await store.modifyRecords(
            [.init(.update, share: upgraded)], in: zone, database: .private, atomic: true, as: alice)
        #expect(stale[0].code == .conflict)

        var without = try #require(up[0].share)
        without.participants = []
        _ = try await store.modifyRecords(
            [.init(.update, share: without)], in: zone, database: .private, atomic: true, as: alice)
        let denied = try await store.lookupRecords(["milk"], in: sharedZone, database: .shared, as: bob)
        #expect(denied[0].code == .zoneNotFound)

        // Deleting the share stops sharing; the records stay.
        let current = try #require(try await store.share(zoneShareRecordName, in: zone, as: alice))
        let deleted = try await store.modifyRecords(
            [.init(.delete, share: current)], in: zone, database: .private, atomic: true, as: alice)
        #expect(deleted == [.deleted(recordName: zoneShareRecordName)])
        #expect(
            try await store.listZones(in: .private, as: alice).first { $0.zoneID.zoneName == "Lists" }?.shareRecordName
                == nil)
        #expect(try await store.record("milk", in: zone, as: alice) != nil)
    }

    @Test func deletingAHierarchyRootEndsItsShare() async throws {
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: alice)
        let out = try await store.modifyRecords(
            [
                .init(.create, todo("trip", in: zone, title: "Trip")),
                .init(.create, todo("day", in: zone, title: "Day", parent: "trip")),
                .init(
                    .create,
                    share: Share(recordName: "", zoneID: zone, rootRecordName: "trip", publicPermission: .readOnly)),
            ], in: zone, database: .private, atomic: true, as: alice)
        let share = try #require(out[2].share)
        #expect(try await store.record("trip", in: zone, as: alice)?.shareRecordName == share.recordName)
        let token = try await store.zoneChanges(zone, in: .private, since: nil, resultsLimit: nil, as: alice).token
        _ = try await store.modifyRecords(
            [.init(.forceDelete, todo("trip", in: zone, title: ""))], in: zone, database: .private, atomic: true,
            as: alice)
        let changes = try await store.zoneChanges(zone, in: .private, since: token, resultsLimit: nil, as: alice)
        #expect(Set(changes.deletedRecordNames) == ["trip", share.recordName])
        await #expect(throws: ShareError.self) { try await store.acceptShare(url: try #require(share.url), as: alice) }
        // A hierarchy share named only by its record name (as the wire names it) is found and deleted.
        let other = try await store.modifyRecords(
            [
                .init(.create, todo("trip2", in: zone, title: "Trip 2")),
                .init(.create, share: Share(recordName: "", zoneID: zone, rootRecordName: "trip2")),
            ], in: zone, database: .private, atomic: true, as: alice)
        let second = try #require(other[1].share)
        let byName = Share(recordName: second.recordName, zoneID: zone, changeTag: second.changeTag)
        let stop = try await store.modifyRecords(
            [.init(.delete, share: byName)], in: zone, database: .private, atomic: true, as: alice)
        #expect(stop == [.deleted(recordName: second.recordName)])
        #expect(try await store.record("trip2", in: zone, as: alice)?.shareRecordName == nil)
        // The child stays, now outside any share, and can be shared on its own.
        let again = try await store.modifyRecords(
            [.init(.create, share: Share(recordName: "", zoneID: zone, rootRecordName: "day"))], in: zone,
            database: .private, atomic: true, as: alice)
        #expect(again[0].error == nil)
    }

    @Test func aPublicShareLetsAnyoneJoinAsAPublicUser() async throws {
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let paula = try await store.signIn(email: "paula@example.com", name: nil).recordName
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: alice)
        let out = try await store.modifyRecords(
            [
                .init(.create, todo("milk", in: zone, title: "Milk")),
                .init(.create, share: Share.zoneWide(zone, publicPermission: .readOnly)),
            ], in: zone, database: .private, atomic: true, as: alice)
        let url = try #require(out[1].share?.url)
        let joined = try await store.acceptShare(url: url, as: paula)
        #expect(joined.participant?.role == .publicUser)
        let sharedZone = ZoneID(zoneName: "Lists", ownerRecordName: alice)
        #expect(try await store.record("milk", in: sharedZone, .shared, as: paula) != nil)
        let write = try await store.create(
            todo("eggs", in: sharedZone, title: "Eggs"), in: sharedZone, .shared, as: paula)
        #expect(write.code == .accessDenied)
        // Opening the share to read-write opens it to the public users who joined read-only: the share lists
        // them with its public permission, and they may write.
        var opened = try #require(try await store.share(zoneShareRecordName, in: zone, as: alice))
        opened.publicPermission = .readWrite
        let reopened = try await store.modifyRecords(
            [.init(.update, share: opened)], in: zone, database: .private, atomic: true, as: alice)
        #expect(reopened[0].share?.participant(paula)?.permission == .readWrite)
        #expect(
            try await store.share(zoneShareRecordName, in: sharedZone, .shared, as: paula)?.participant(paula)?
                .permission == .readWrite)
        let eggs = try await store.create(
            todo("eggs", in: sharedZone, title: "Eggs"), in: sharedZone, .shared, as: paula)
        #expect(eggs.record != nil)
        // Turning the share private drops its public users.
        var closed = try #require(try await store.share(zoneShareRecordName, in: zone, as: alice))
        closed.publicPermission = .none
        let saved = try await store.modifyRecords(
            [.init(.update, share: closed)], in: zone, database: .private, atomic: true, as: alice)
        #expect(saved[0].share?.participants.isEmpty == true)
        #expect(try await store.listZones(in: .shared, as: paula).isEmpty)
    }

    @Test("a record whose parent is deleted leaves the hierarchy share: its participant can no longer see or change it")
    func orphanedRecordsLeaveTheHierarchy() async throws {
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let carol = try await store.signIn(email: "carol@example.com", name: nil).recordName
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: alice)
        var share = Share(recordName: "", zoneID: zone, rootRecordName: "trip")
        share.participants = [Participant(userRecordName: carol, permission: .readWrite)]
        let out = try await store.modifyRecords(
            [
                .init(.create, todo("trip", in: zone, title: "Trip")),
                .init(.create, todo("day", in: zone, title: "Day", parent: "trip")),
                .init(.create, todo("stop", in: zone, title: "Stop", parent: "day")),
                .init(.create, share: share),
            ], in: zone, database: .private, atomic: true, as: alice)
        let url = try #require(out[3].share?.url)
        _ = try await store.acceptShare(url: url, as: carol)
        let shared = ZoneID(zoneName: "Lists", ownerRecordName: alice)
        #expect(try await store.record("stop", in: shared, .shared, as: carol) != nil)

        // The owner deletes the middle record: `stop` stays, but its parent chain no longer reaches `trip`.
        _ = try await store.modifyRecords(
            [.init(.forceDelete, todo("day", in: zone, title: ""))], in: zone, database: .private, atomic: true,
            as: alice)
        #expect(try await store.record("stop", in: zone, as: alice) != nil)
        #expect(try await store.record("stop", in: shared, .shared, as: carol) == nil)
        let edit = try await store.modifyRecords(
            [.init(.forceUpdate, todo("stop", in: shared, title: "Carol's"))], in: shared, database: .shared,
            atomic: true, as: carol)
        #expect(edit.first?.error?.code == .accessDenied, "\(edit)")
        #expect(try await store.record("stop", in: zone, as: alice)?.fields["title"] == .string("Stop"))
        // The root is still shared with her.
        #expect(try await store.record("trip", in: shared, .shared, as: carol) != nil)
    }
}
