import Foundation
import ShareKit
import ShareStoreSQLite
import Testing

/// The embedded store keeps the rules published captures of Apple's live service show (shared/CLOUDKIT.md,
/// "What the live service answers"), as `serve` does on the wire (Tests/EmulatorTests/LiveAnswerTests.swift):
/// permission before the change tag, no atomic batch in a default zone, no tagless update, replace or delete.
@Suite("The live service's rules in the embedded store")
struct LiveRuleTests {
    let store: SQLiteStore
    let alice: UserRecordName
    let bob: UserRecordName
    let zone = ZoneID(zoneName: "Lists")

    init() async throws {
        store = try SQLiteStore.inMemory()
        alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
    }

    func card(_ name: String, tag: String? = nil, in zoneID: ZoneID = .defaultZone) -> Record {
        Record(recordName: name, recordType: "Card", zoneID: zoneID, fields: ["title": .string("x")], changeTag: tag)
    }

    func modify(
        _ operations: [RecordOperation], in zoneID: ZoneID = .defaultZone, _ database: DatabaseScope = .public,
        atomic: Bool = false, as user: UserRecordName
    ) async throws -> [RecordOutcome] {
        try await store.modifyRecords(operations, in: zoneID, database: database, atomic: atomic, as: user)
    }

    /// The words of a reason: a change tag is told only as one of them.
    static func words(_ reason: String?) -> Set<String> {
        Set((reason ?? "").split { !$0.isLetter && !$0.isNumber && $0 != "-" && $0 != "_" }.map(String.init))
    }

    func refusal(of call: () async throws -> [RecordOutcome]) async -> ShareError? {
        do {
            _ = try await call()
            return nil
        } catch {
            return error as? ShareError
        }
    }

    @Test("a user who may not write a public record is refused ACCESS_DENIED whatever tag they send, never told it")
    func permissionBeforeTagInThePublicDatabase() async throws {
        let created = try #require(try await modify([.init(.create, card("card"))], as: alice)[0].record)
        let tag = try #require(created.changeTag)
        for sent in ["stale", tag] {
            for kind in [OperationKind.update, .replace, .delete] {
                let outcome = try await modify([.init(kind, card("card", tag: sent))], as: bob)[0]
                #expect(outcome.code == .accessDenied, "\(kind) with \(sent): \(outcome)")
                #expect(outcome.error?.reason.hasPrefix("Operation not permitted") == true)
                let told = Self.words(outcome.error?.reason)
                #expect(!told.contains(tag))
                #expect(outcome.error?.reason.contains(alice) == false)
            }
        }
        // The creator may write: its stale tag is a conflict.
        #expect(try await modify([.init(.update, card("card", tag: "stale"))], as: alice)[0].code == .conflict)
        let read = try await store.lookupRecords(["card"], in: .defaultZone, database: .public, as: alice)
        #expect(read.first?.record?.changeTag == tag)
    }

    @Test("a read-only participant's stale tag is ACCESS_DENIED, on a record and on the share, never CONFLICT")
    func permissionBeforeTagInTheSharedDatabase() async throws {
        _ = try await store.modifyZones([ZoneOperation(.create, zone)], in: .private, as: alice)
        var share = Share.zoneWide(zone)
        share.participants = [Participant(userRecordName: bob, permission: .readOnly)]
        let saved = try await modify(
            [.init(.create, card("milk", in: zone)), .init(.create, share: share)], in: zone, .private, as: alice)
        let savedShare = try #require(saved[1].share)
        let recordTag = try #require(saved[0].record?.changeTag)
        _ = try await store.acceptShare(url: try #require(savedShare.url), as: bob)
        let shared = ZoneID(zoneName: "Lists", ownerRecordName: alice)

        for kind in [OperationKind.update, .replace, .delete] {
            let outcome = try await modify(
                [.init(kind, card("milk", tag: "stale", in: shared))], in: shared, .shared, as: bob)[0]
            #expect(outcome.code == .accessDenied, "\(kind): \(outcome)")
            let told = Self.words(outcome.error?.reason)
            #expect(!told.contains(recordTag))
        }
        var retitled = savedShare
        retitled.zoneID = shared
        retitled.title = "Bob's"
        retitled.changeTag = "stale"
        let shareUpdate = try await modify([.init(.update, share: retitled)], in: shared, .shared, as: bob)[0]
        #expect(shareUpdate.code == .accessDenied, "\(shareUpdate)")
        let told = Self.words(shareUpdate.error?.reason)
        #expect(!told.contains(savedShare.changeTag ?? "-"))
    }

    @Test("an atomic batch of several operations in a default zone is refused whole, nothing saved; one is taken")
    func atomicInADefaultZone() async throws {
        for (zoneID, database) in [(ZoneID.defaultZone, DatabaseScope.public), (.defaultZone, .private)] {
            let refusal = await refusal {
                try await modify(
                    [.init(.create, card("a")), .init(.create, card("b"))], in: zoneID, database, atomic: true,
                    as: alice)
            }
            #expect(refusal?.code == .badRequest)
            #expect(refusal?.reason == "atomic operations not supported in default zone")
            let read = try await store.lookupRecords(["a", "b"], in: zoneID, database: database, as: alice)
            #expect(read.map(\.code) == [.notFound, .notFound])
            // An atomic batch of one is the operation itself (a lane's write).
            let one = try await modify([.init(.forceUpdate, card("a"))], in: zoneID, database, atomic: true, as: alice)
            #expect(one.map(\.code) == [nil])
        }
        // Several writes in one call: a refused one fails the call, as the store's contract says.
        let results = await store.modifyRecords(
            [
                ZoneWrite(
                    [.init(.create, card("c")), .init(.create, card("d"))], in: .defaultZone, database: .public,
                    atomic: true)
            ], as: alice)
        guard case .failure(let error as ShareError)? = results.first else {
            Issue.record("the atomic write in the default zone was not refused: \(results)")
            return
        }
        #expect(error.code == .badRequest)
    }

    @Test("an update, replace or delete without a change tag is refused whole, nothing saved; forced forms need none")
    func missingChangeTag() async throws {
        let created = try #require(try await modify([.init(.create, card("card"))], as: alice)[0].record)
        for kind in [OperationKind.update, .replace, .delete] {
            let refusal = await refusal {
                try await modify([.init(.create, card("beside")), .init(kind, card("card"))], as: alice)
            }
            #expect(refusal?.code == .badRequest, "\(kind)")
            #expect(refusal?.reason == "missing required field 'recordChangeTag'")
            let read = try await store.lookupRecords(
                ["beside", "card"], in: .defaultZone, database: .public, as: alice)
            #expect(read.map(\.code) == [.notFound, nil])
            #expect(read.last?.record?.changeTag == created.changeTag)
        }
        // A share's update or delete needs its tag too.
        _ = try await store.modifyZones([ZoneOperation(.create, zone)], in: .private, as: alice)
        _ = try await modify([.init(.create, share: Share.zoneWide(zone))], in: zone, .private, as: alice)
        let shareRefusal = await refusal {
            try await modify([.init(.delete, share: Share.zoneWide(zone))], in: zone, .private, as: alice)
        }
        #expect(shareRefusal?.code == .badRequest)
        for kind in [OperationKind.forceUpdate, .forceReplace, .forceDelete] {
            let outcome = try await modify([.init(kind, card("card"))], as: alice)
            #expect(outcome.map(\.code) == [nil], "\(kind)")
        }
    }
}
