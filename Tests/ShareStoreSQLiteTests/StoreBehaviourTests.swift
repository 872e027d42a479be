import Foundation
import GRDB
import Logging
import ShareKit
import ShareStoreSQLite
import Testing

@Suite struct StoreBehaviourTests {
    let temp: TemporaryStore
    var store: SQLiteStore { temp.store }
    let zone = ZoneID(zoneName: "Lists")

    init() throws { temp = try TemporaryStore() }

    func alice() async throws -> UserRecordName {
        let user = try await store.signIn(email: "Alice@Example.com ", name: "Alice")
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: user.recordName)
        return user.recordName
    }

    @Test func userRecordNamesComeFromTheEmail() async throws {
        let a = try await store.signIn(email: "alice@example.com", name: nil)
        let b = try await store.signIn(email: " ALICE@example.COM", name: "Alice")
        #expect(a.recordName == b.recordName)
        #expect(a.recordName == "_" + StableName.fnv1a128Hex("alice@example.com"))
        #expect(a.recordName == "_50e0189ca0f60ad4c4efa63266de4996")
        #expect(
            try await store.lookupUsers(emails: ["Alice@example.com", "nobody@example.com"], as: a.recordName)
                == [User(recordName: a.recordName, email: "alice@example.com", name: "Alice"), nil])
        await #expect(throws: ShareError.self) { try await store.signIn(email: "not an email", name: nil) }
    }

    @Test func reopeningTheFileKeepsEverything() async throws {
        let owner = try await alice()
        let bob = try await store.signIn(email: "bob@example.com", name: "Bob").recordName
        var share = Share.zoneWide(zone, title: "Lists")
        share.participants = [Participant(userRecordName: bob, permission: .readWrite)]
        let outcomes = try await store.modifyRecords(
            [
                RecordOperation(
                    .create,
                    Record(
                        recordName: "groceries", recordType: "TodoList", zoneID: zone,
                        fields: [
                            "title": .string("Groceries"), "count": .int64(-3), "price": .double(2.5),
                            "when": .timestamp(1_714_554_000_000), "raw": .bytes(Data([0, 1, 255])),
                            "tags": .list(elementType: .string, [.string("a"), .string("b")]),
                            "where": .location(Location(latitude: 48.8, longitude: 2.3, altitude: 35)),
                            "empty": .list(elementType: .int64, []),
                        ])),
                RecordOperation(.create, share: share),
            ], in: zone, database: .private, atomic: true, as: owner)
        let url = try #require(outcomes[1].share?.url)
        _ = try await store.acceptShare(url: url, as: bob)

        let reopened = try temp.reopen()
        #expect(
            try await reopened.record("groceries", in: zone, as: owner)
                == outcomes[0].record.map {
                    var r = $0
                    r.shareRecordName = nil
                    return r
                })
        let zones = try await reopened.listZones(in: .shared, as: bob)
        #expect(zones.map(\.zoneID) == [ZoneID(zoneName: "Lists", ownerRecordName: owner)])
        let reread = try await reopened.share(zoneShareRecordName, in: zone, as: owner)
        #expect(reread?.participants.map(\.acceptance) == [.accepted])
        #expect(reread?.participants.first?.email == "bob@example.com")
        #expect(try await reopened.currentUser(as: owner).name == "Alice")
    }

    @Test("once told writing is done, the store copies its log into the database file while it stays open")
    func finishedWritingCopiesTheLogIntoTheFile() async throws {
        let owner = try await alice()
        let records = (0..<300).map {
            Record(
                recordName: "r\($0)", recordType: "Item", zoneID: zone,
                fields: ["note": .string(String(repeating: "a note about item \($0). ", count: 8))])
        }
        _ = try await store.modifyRecords(
            records.map { RecordOperation(.create, $0) }, in: zone, database: .private, atomic: true, as: owner)
        /// The records a copy of the database file alone holds, as a backup taken while the store is open would.
        func recordsInCopyOfFile() throws -> Int {
            let copy = temp.directory.appendingPathComponent("copy-\(UUID().uuidString).sqlite").path
            try FileManager.default.copyItem(atPath: temp.path, toPath: copy)
            return try DatabaseQueue(path: copy).read { db in
                // Before the copy, even the tables may be only in the log.
                guard try db.tableExists("record") else { return 0 }
                return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM record") ?? 0
            }
        }
        #expect(try recordsInCopyOfFile() == 0)
        store.finishedWriting()
        // The store's next write waits for the copy, which runs on its writer.
        _ = try await store.create(Record(recordName: "after", recordType: "Item", zoneID: zone), in: zone, as: owner)
        #expect(try recordsInCopyOfFile() == 300)
        // And the store reads them as before.
        let read = try await store.lookupRecords(
            records.map(\.recordName), in: zone, database: .private, as: owner
        ).compactMap(\.record)
        #expect(read.map(\.recordName) == records.map(\.recordName))
        #expect(read.map(\.fields) == records.map(\.fields))
    }

    @Test func aStaleChangeTagConflicts() async throws {
        let owner = try await alice()
        let created = try #require(
            try await store.create(todo("milk", in: zone, title: "Milk"), in: zone, as: owner).record)
        var first = created
        first.fields["title"] = .string("Oat milk")
        let updated = try await store.modifyRecords(
            [.init(.update, first)], in: zone, database: .private, atomic: false, as: owner)
        #expect(updated[0].record?.changeTag != created.changeTag)
        var stale = created
        stale.fields["title"] = .string("Soy milk")
        let conflict = try await store.modifyRecords(
            [.init(.update, stale)], in: zone, database: .private, atomic: false, as: owner)
        #expect(conflict[0].code == .conflict)
        let delete = try await store.modifyRecords(
            [.init(.delete, stale)], in: zone, database: .private, atomic: false, as: owner)
        #expect(delete[0].code == .conflict)
        #expect(try await store.record("milk", in: zone, as: owner)?.fields["title"] == .string("Oat milk"))
        // forceUpdate ignores the tag; update keeps unnamed fields, replace drops them.
        var force = created
        force.fields = ["done": .int64(1)]
        let forced = try await store.modifyRecords(
            [.init(.forceUpdate, force)], in: zone, database: .private, atomic: false, as: owner)
        #expect(forced[0].record?.fields == ["title": .string("Oat milk"), "done": .int64(1)])
        var replace = try #require(forced[0].record)
        replace.fields = ["done": .int64(0)]
        let replaced = try await store.modifyRecords(
            [.init(.replace, replace)], in: zone, database: .private, atomic: false, as: owner)
        #expect(replaced[0].record?.fields == ["done": .int64(0)])
        let again = try await store.create(todo("milk", in: zone, title: "Milk"), in: zone, as: owner)
        #expect(again.code == .exists)
    }

    @Test func anAtomicBatchWithOneFailureWritesNothing() async throws {
        let owner = try await alice()
        _ = try await store.create(todo("milk", in: zone, title: "Milk"), in: zone, as: owner)
        let before = try await store.snapshot(zone, owner: owner)
        let outcomes = try await store.modifyRecords(
            [
                .init(.create, todo("eggs", in: zone, title: "Eggs")),
                .init(.create, todo("milk", in: zone, title: "Milk again")),
                .init(.create, todo("bread", in: zone, title: "Bread", parent: "nowhere")),
            ], in: zone, database: .private, atomic: true, as: owner)
        #expect(outcomes.map(\.code) == [.atomicError, .exists, .validatingReferenceError])
        #expect(try await store.snapshot(zone, owner: owner) == before)
        let changes = try await store.databaseChanges(in: .private, since: nil, as: owner)
        let later = try await store.databaseChanges(in: .private, since: changes.token, as: owner)
        #expect(later.changedZones.isEmpty)
    }

    @Test func aNonAtomicBatchReportsEachResult() async throws {
        let owner = try await alice()
        _ = try await store.create(todo("milk", in: zone, title: "Milk"), in: zone, as: owner)
        // An update sends the tag it read (without one the whole call is refused: LiveRuleTests).
        var ghost = todo("ghost", in: zone, title: "Ghost")
        ghost.changeTag = "1"
        let outcomes = try await store.modifyRecords(
            [
                .init(.create, todo("eggs", in: zone, title: "Eggs")),
                .init(.create, todo("milk", in: zone, title: "Milk again")),
                .init(.update, ghost),
                .init(.create, todo("yolk", in: zone, title: "Yolk", parent: "eggs")),
            ], in: zone, database: .private, atomic: false, as: owner)
        #expect(outcomes.map(\.code) == [nil, .exists, .notFound, nil])
        #expect(try await store.record("eggs", in: zone, as: owner) != nil)
        #expect(try await store.record("yolk", in: zone, as: owner)?.parent == "eggs")
        #expect(try await store.record("milk", in: zone, as: owner)?.fields["title"] == .string("Milk"))
        let missing = try await store.modifyRecords(
            [.init(.create, todo("x", in: ZoneID(zoneName: "Nope"), title: "X"))], in: ZoneID(zoneName: "Nope"),
            database: .private, atomic: false, as: owner)
        #expect(missing.map(\.code) == [.zoneNotFound])
    }

    @Test("a feed of records and deletions read in pages of 1, 2 and 3 sees each change once, in the order made")
    func pagesMergeRecordsAndDeletionsInOrder() async throws {
        let owner = try await alice()
        _ = try await store.modifyRecords(
            ["a", "b", "c"].map { .init(.create, todo($0, in: zone, title: $0)) }, in: zone, database: .private,
            atomic: true, as: owner)
        let b = try #require(try await store.record("b", in: zone, as: owner))
        _ = try await store.modifyRecords([.init(.delete, b)], in: zone, database: .private, atomic: true, as: owner)
        _ = try await store.modifyRecords(
            [.init(.create, todo("d", in: zone, title: "d"))], in: zone, database: .private, atomic: true, as: owner)
        // Made in this order: a, c (b's creation is gone with it), b's deletion, d.
        for size in 1...3 {
            var token: ChangeToken?
            var seen: [String] = []
            var pages = 0
            while pages < 10 {
                let page = try await store.zoneChanges(zone, in: .private, since: token, resultsLimit: size, as: owner)
                #expect(page.changedRecords.count + page.deletedRecordNames.count <= size)
                // A page lists its records, then its deletions.
                seen += page.changedRecords.map(\.recordName) + page.deletedRecordNames.map { "-" + $0 }
                token = page.token
                pages += 1
                if !page.moreComing { break }
            }
            // Pages of 2: {a, c}, then {b's deletion, d}, listed as its record, then its deletion.
            let expected: [[String]] = [
                ["a", "c", "-b", "d"], ["a", "c", "d", "-b"], ["a", "c", "-b", "d"],
            ]
            #expect(seen == expected[size - 1], "pages of \(size)")
            #expect(pages == (4 + size - 1) / size, "pages of \(size)")
        }
        // Pages of 3: a, c and b's deletion, then d; the first page's records come before its deletion.
        let first = try await store.zoneChanges(zone, in: .private, since: nil, resultsLimit: 3, as: owner)
        #expect(first.changedRecords.map(\.recordName) == ["a", "c"] && first.deletedRecordNames == ["b"])
        #expect(first.moreComing)
    }

    @Test func changeTokensReturnExactlyWhatChanged() async throws {
        let owner = try await alice()
        _ = try await store.modifyRecords(
            (1...5).map { .init(.create, todo("r\($0)", in: zone, title: "R\($0)")) }, in: zone, database: .private,
            atomic: true, as: owner)
        let first = try await store.zoneChanges(zone, in: .private, since: nil, resultsLimit: nil, as: owner)
        #expect(first.changedRecords.map(\.recordName) == ["r1", "r2", "r3", "r4", "r5"])
        #expect(!first.moreComing)

        let r2 = try #require(first.changedRecords.first { $0.recordName == "r2" })
        var changed = r2
        changed.fields["title"] = .string("R2!")
        let r4 = try #require(first.changedRecords.first { $0.recordName == "r4" })
        _ = try await store.modifyRecords(
            [.init(.update, changed), .init(.delete, r4), .init(.create, todo("r6", in: zone, title: "R6"))], in: zone,
            database: .private, atomic: true, as: owner)
        let second = try await store.zoneChanges(zone, in: .private, since: first.token, resultsLimit: nil, as: owner)
        #expect(second.changedRecords.map(\.recordName) == ["r2", "r6"])
        #expect(second.deletedRecordNames == ["r4"])
        let third = try await store.zoneChanges(zone, in: .private, since: second.token, resultsLimit: nil, as: owner)
        #expect(third.changedRecords.isEmpty && third.deletedRecordNames.isEmpty)

        // Paged from the beginning: every record once, in pages of two.
        var token: ChangeToken?
        var seen: [String] = []
        var pages = 0
        repeat {
            let page = try await store.zoneChanges(zone, in: .private, since: token, resultsLimit: 2, as: owner)
            #expect(page.changedRecords.count + page.deletedRecordNames.count <= 2)
            seen += page.changedRecords.map(\.recordName)
            token = page.token
            pages += 1
            if !page.moreComing { break }
        } while pages < 10
        #expect(seen.sorted() == ["r1", "r2", "r3", "r5", "r6"])

        // Database changes: the zone changed since the start; another zone's creation and deletion show.
        let db0 = try await store.databaseChanges(in: .private, since: nil, as: owner)
        #expect(db0.changedZones.contains(zone))
        let other = ZoneID(zoneName: "Other")
        _ = try await store.modifyZones([.init(.create, other)], in: .private, as: owner)
        let db1 = try await store.databaseChanges(in: .private, since: db0.token, as: owner)
        #expect(db1.changedZones == [other] && db1.deletedZones.isEmpty)
        _ = try await store.modifyZones([.init(.delete, other)], in: .private, as: owner)
        let db2 = try await store.databaseChanges(in: .private, since: db1.token, as: owner)
        #expect(db2.changedZones.isEmpty && db2.deletedZones == [other])
        await #expect(throws: ShareError.self) {
            try await store.zoneChanges(
                zone, in: .private, since: ChangeToken(rawValue: "bogus"), resultsLimit: nil, as: owner)
        }
    }

    @Test func deleteSelfReferencesCascade() async throws {
        let owner = try await alice()
        var item = todo("milk", in: zone, title: "Milk")
        item.fields["list"] = .reference(Reference(recordName: "groceries", action: .deleteSelf))
        var note = todo("note", in: zone, title: "About milk")
        note.fields["about"] = .reference(Reference(recordName: "milk", action: .deleteSelf))
        var keep = todo("keep", in: zone, title: "Kept")
        keep.fields["list"] = .reference(Reference(recordName: "groceries", action: .none))
        let outcomes = try await store.modifyRecords(
            [
                .init(.create, Record(recordName: "groceries", recordType: "TodoList", zoneID: zone)),
                .init(.create, item), .init(.create, note), .init(.create, keep),
            ], in: zone, database: .private, atomic: true, as: owner)
        #expect(outcomes.allSatisfy { $0.error == nil })
        let token = try await store.zoneChanges(zone, in: .private, since: nil, resultsLimit: nil, as: owner).token
        let deleted = try await store.modifyRecords(
            [.init(.forceDelete, Record(recordName: "groceries", recordType: "TodoList", zoneID: zone))], in: zone,
            database: .private, atomic: true, as: owner)
        #expect(deleted == [.deleted(recordName: "groceries")])
        let left = try await store.snapshot(zone, owner: owner).records.map(\.recordName)
        #expect(left == ["keep"])
        let changes = try await store.zoneChanges(zone, in: .private, since: token, resultsLimit: nil, as: owner)
        #expect(Set(changes.deletedRecordNames) == ["groceries", "milk", "note"])
    }

    @Test func validateReferencesMustPointSomewhere() async throws {
        let owner = try await alice()
        var item = todo("milk", in: zone, title: "Milk")
        item.fields["list"] = .reference(Reference(recordName: "groceries", action: .validate))
        #expect(try await store.create(item, in: zone, as: owner).code == .validatingReferenceError)
        _ = try await store.create(
            Record(recordName: "groceries", recordType: "TodoList", zoneID: zone), in: zone, as: owner)
        #expect(try await store.create(item, in: zone, as: owner).code == nil)
    }

    @Test func parentCyclesAreRefused() async throws {
        let owner = try await alice()
        _ = try await store.modifyRecords(
            [
                .init(.create, todo("a", in: zone, title: "A")),
                .init(.create, todo("b", in: zone, title: "B", parent: "a")),
                .init(.create, todo("c", in: zone, title: "C", parent: "b")),
            ], in: zone, database: .private, atomic: true, as: owner)
        let a = try #require(try await store.record("a", in: zone, as: owner))
        var cyclic = a
        cyclic.parent = "c"
        let outcome = try await store.modifyRecords(
            [.init(.update, cyclic)], in: zone, database: .private, atomic: false, as: owner)
        #expect(outcome[0].code == .badRequest)
        #expect(outcome[0].error?.reason.contains("cycle") == true)
        var selfParent = a
        selfParent.parent = "a"
        let own = try await store.modifyRecords(
            [.init(.update, selfParent)], in: zone, database: .private, atomic: false, as: owner)
        #expect(own[0].code == .badRequest)
        #expect(try await store.record("a", in: zone, as: owner)?.parent == nil)
    }

    @Test func aRecordCreatedUnderASharedRootJoinsTheHierarchy() async throws {
        let owner = try await alice()
        let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
        let share = Share(
            recordName: "", zoneID: zone, rootRecordName: "trip",
            participants: [Participant(userRecordName: bob, permission: .readOnly)])
        let out = try await store.modifyRecords(
            [.init(.create, todo("trip", in: zone, title: "Trip")), .init(.create, share: share)], in: zone,
            database: .private, atomic: true, as: owner)
        let saved = try #require(out[1].share)
        #expect(saved.recordName == StableName.hierarchyShareRecordName(zoneName: "Lists", rootRecordName: "trip"))
        #expect(saved.url == "https://www.icloud.com/share/" + (saved.shortGUID ?? "?"))
        #expect(saved.participants.map(\.acceptance) == [.pending])
        _ = try await store.acceptShare(url: try #require(saved.shortGUID), as: bob)
        _ = try await store.modifyRecords(
            [
                .init(.create, todo("day1", in: zone, title: "Day 1", parent: "trip")),
                .init(.create, todo("lunch", in: zone, title: "Lunch", parent: "day1")),
                .init(.create, todo("other", in: zone, title: "Other")),
            ], in: zone, database: .private, atomic: true, as: owner)
        let shared = ZoneID(zoneName: "Lists", ownerRecordName: owner)
        let seen = try await store.zoneChanges(shared, in: .shared, since: nil, resultsLimit: nil, as: bob)
        #expect(seen.changedRecords.map(\.recordName).sorted() == ["day1", "lunch", "trip"])
        #expect(try await store.record("lunch", in: shared, .shared, as: bob) != nil)
        // Outside the hierarchy, `other` answers as a missing record does.
        let other = try await store.lookupRecords(["other", "nothing"], in: shared, database: .shared, as: bob)
        #expect(other.map(\.code) == [.notFound, .notFound])
        #expect(other[0].error?.reason == "no record named other in this zone")
        // Moving `other` under the root brings it in; moving `day1` out takes `lunch` with it.
        var moved = try #require(try await store.record("other", in: zone, as: owner))
        moved.parent = "trip"
        var out1 = try #require(try await store.record("day1", in: zone, as: owner))
        out1.parent = "other-root"
        _ = try await store.create(todo("other-root", in: zone, title: "Elsewhere"), in: zone, as: owner)
        let moves = try await store.modifyRecords(
            [.init(.update, moved), .init(.replace, out1)], in: zone, database: .private, atomic: true, as: owner)
        #expect(moves.allSatisfy { $0.error == nil })
        let after = try await store.zoneChanges(shared, in: .shared, since: nil, resultsLimit: nil, as: bob)
        #expect(after.changedRecords.map(\.recordName).sorted() == ["other", "trip"])
        // A record takes part in one share only.
        let nested = Share(recordName: "", zoneID: zone, rootRecordName: "other")
        let refused = try await store.modifyRecords(
            [.init(.create, share: nested)], in: zone, database: .private, atomic: true, as: owner)
        #expect(refused[0].code == .badRequest)
        let whole = try await store.modifyRecords(
            [.init(.create, share: Share.zoneWide(zone))], in: zone, database: .private, atomic: true, as: owner)
        #expect(whole[0].code == .badRequest)
    }

    @Test func aShareHoldsAtMostAHundredParticipants() async throws {
        let owner = try await alice()
        var share = Share.zoneWide(zone)
        share.participants = (1...101).map { Participant(userRecordName: "", email: "p\($0)@example.com") }
        let refused = try await store.modifyRecords(
            [.init(.create, share: share)], in: zone, database: .private, atomic: true, as: owner)
        #expect(refused[0].code == .badRequest)
        #expect(try await store.share(zoneShareRecordName, in: zone, as: owner) == nil)
        share.participants.removeLast()
        let saved = try await store.modifyRecords(
            [.init(.create, share: share)], in: zone, database: .private, atomic: true, as: owner)
        #expect(saved[0].share?.participants.count == 100)
        // Participants named by email become users; the store fills in their details.
        #expect(
            saved[0].share?.participants.first?.userRecordName == StableName.userRecordName(email: "p1@example.com"))
        #expect(saved[0].share?.participants.first?.email == "p1@example.com")
        // Public and private participants are not mixed.
        var mixed = try #require(saved[0].share)
        mixed.publicPermission = .readOnly
        let refusedMix = try await store.modifyRecords(
            [.init(.update, share: mixed)], in: zone, database: .private, atomic: true, as: owner)
        #expect(refusedMix[0].code == .badRequest)
    }

    @Test func thePublicDatabaseIsReadableByAllAndWritableByTheCreator() async throws {
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
        let pub = ZoneID(zoneName: defaultZoneName)
        let card = Record(
            recordName: "alice-card", recordType: "MyUser", zoneID: pub, fields: ["firstName": .string("Alice")])
        let created = try #require(try await store.create(card, in: pub, .public, as: alice).record)
        #expect(
            try await store.record("alice-card", in: pub, .public, as: bob)?.fields["firstName"] == .string("Alice"))
        var edit = created
        edit.fields["firstName"] = .string("Mallory")
        let byBob = try await store.modifyRecords(
            [.init(.update, edit)], in: pub, database: .public, atomic: false, as: bob)
        #expect(byBob[0].code == .accessDenied)
        let deleteByBob = try await store.modifyRecords(
            [.init(.delete, created)], in: pub, database: .public, atomic: false, as: bob)
        #expect(deleteByBob[0].code == .accessDenied)
        let byAlice = try await store.modifyRecords(
            [.init(.update, edit)], in: pub, database: .public, atomic: false, as: alice)
        #expect(byAlice[0].error == nil)
        #expect(
            try await store.create(
                Record(recordName: "bob-card", recordType: "MyUser", zoneID: pub), in: pub, .public, as: bob
            ).error == nil)
        let otherZone = try await store.lookupZones([ZoneID(zoneName: "Lists")], in: .public, as: bob)
        if case .failure(let e) = otherZone[0] {
            #expect(e.code == .zoneNotFound)
        } else {
            Issue.record("found a public zone Lists")
        }
        let share = try await store.modifyRecords(
            [.init(.create, share: Share.zoneWide(pub))], in: pub, database: .public, atomic: true, as: alice)
        #expect(share[0].code == .badRequest)
    }

    @Test func someoneElsesZoneIsReachedOnlyThroughTheSharedDatabase() async throws {
        let owner = try await alice()
        let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
        _ = try await store.create(todo("milk", in: zone, title: "Milk"), in: zone, as: owner)
        let viaPrivate = try await store.lookupRecords(
            ["milk"], in: ZoneID(zoneName: "Lists", ownerRecordName: owner), database: .private, as: bob)
        #expect(viaPrivate[0].code == .accessDenied)
        let ownPrivate = try await store.lookupRecords(["milk"], in: zone, database: .private, as: bob)
        #expect(ownPrivate[0].code == .zoneNotFound)
        #expect(try await store.listZones(in: .shared, as: bob).isEmpty)
        let lookup = try await store.lookupZones(
            [ZoneID(zoneName: "Lists", ownerRecordName: owner)], in: .shared, as: bob)
        if case .failure(let e) = lookup[0] { #expect(e.code == .zoneNotFound) } else { Issue.record("Bob sees Lists") }
    }

    @Test func deletingAZoneDeletesItsRecordsAndShare() async throws {
        let owner = try await alice()
        let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
        var share = Share.zoneWide(zone)
        share.participants = [Participant(userRecordName: bob, permission: .readWrite)]
        let out = try await store.modifyRecords(
            [.init(.create, todo("milk", in: zone, title: "Milk")), .init(.create, share: share)], in: zone,
            database: .private, atomic: true, as: owner)
        let url = try #require(out[1].share?.url)
        _ = try await store.acceptShare(url: url, as: bob)
        let bobToken = try await store.databaseChanges(in: .shared, since: nil, as: bob).token
        let result = try await store.modifyZones([.init(.delete, zone)], in: .private, as: owner)
        #expect((try? result[0].get()) != nil)
        #expect(try await store.listZones(in: .private, as: owner).map(\.zoneID.zoneName) == [defaultZoneName])
        #expect(try await store.listZones(in: .shared, as: bob).isEmpty)
        await #expect(throws: ShareError.self) { try await store.acceptShare(url: url, as: bob) }
        let bobChanges = try await store.databaseChanges(in: .shared, since: bobToken, as: bob)
        #expect(bobChanges.deletedZones == [ZoneID(zoneName: "Lists", ownerRecordName: owner)])
        // Re-created, the zone is empty.
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: owner)
        #expect(try await store.snapshot(zone, owner: owner).records.isEmpty)
    }

    @Test func inMemoryStoresUseTheSameRules() async throws {
        let memory = try SQLiteStore(writer: DatabaseQueue())
        let alice = try await memory.signIn(email: "alice@example.com", name: nil).recordName
        let bob = try await memory.signIn(email: "bob@example.com", name: nil).recordName
        _ = try await memory.modifyZones([.init(.create, zone)], in: .private, as: alice)
        _ = try await memory.create(todo("milk", in: zone, title: "Milk"), in: zone, as: alice)
        let denied = try await memory.lookupRecords(
            ["milk"], in: ZoneID(zoneName: "Lists", ownerRecordName: alice), database: .shared, as: bob)
        // A zone not shared with Bob answers as a missing one: a refusal tells nothing of what exists.
        #expect(denied[0].code == .zoneNotFound)
        #expect(try SQLiteStore.inMemory().displayName == "memory:")
    }

    @Test func queriesFilterSortAndPage() async throws {
        let owner = try await alice()
        _ = try await store.modifyRecords(
            (1...7).map {
                .init(
                    .create,
                    Record(
                        recordName: "t\($0)", recordType: "Todo", zoneID: zone,
                        fields: ["qty": .int64(Int64($0 % 4)), "title": .string("Item \($0)")]))
            }, in: zone, database: .private, atomic: true, as: owner)
        let query = RecordQuery(
            recordType: "Todo", filters: [QueryFilter("qty", .greaterThan, .int64(0))],
            sort: [QuerySort("qty", ascending: false)], resultsLimit: 3)
        let page1 = try await store.queryRecords(query, in: zone, database: .private, as: owner)
        #expect(page1.records.map(\.recordName) == ["t3", "t7", "t2"])
        var next = query
        next.continuationMarker = page1.continuationMarker
        let page2 = try await store.queryRecords(next, in: zone, database: .private, as: owner)
        #expect(page2.records.map(\.recordName) == ["t6", "t1", "t5"])
        #expect(page2.continuationMarker == nil)
        let begins = try await store.queryRecords(
            RecordQuery(recordType: "Todo", filters: [QueryFilter("title", .beginsWith, .string("Item 1"))]), in: zone,
            database: .private, as: owner)
        #expect(begins.records.map(\.recordName) == ["t1"])
        // Unsorted, pages follow record names, filtered.
        var unsorted = RecordQuery(
            recordType: "Todo", filters: [QueryFilter("qty", .notEquals, .int64(0))], resultsLimit: 4)
        let first = try await store.queryRecords(unsorted, in: zone, database: .private, as: owner)
        #expect(first.records.map(\.recordName) == ["t1", "t2", "t3", "t5"])
        unsorted.continuationMarker = first.continuationMarker
        let second = try await store.queryRecords(unsorted, in: zone, database: .private, as: owner)
        #expect(second.records.map(\.recordName) == ["t6", "t7"])
        #expect(second.continuationMarker == nil)
    }
}
