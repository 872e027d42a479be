import Foundation
import GRDB
import ShareKit
import Testing

@testable import ShareStoreSQLite

/// Enumerated columns hold ShareKit's words; a word the store does not know is an error, never a default.
@Suite("Typed columns")
struct TypedColumnTests {
    @Test("a participant or share row with a word the store does not know fails loudly, never read as a default")
    func unknownWordsFailLoudly() async throws {
        let queue = try DatabaseQueue()
        let store = try SQLiteStore(writer: queue)
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
        let zone = ZoneID(zoneName: "Z")
        _ = try await store.modifyZones([ZoneOperation(.create, zone)], in: .private, as: alice)
        var share = Share.zoneWide(zone)
        share.participants = [Participant(userRecordName: bob, permission: .readOnly)]
        let saved = try await store.modifyRecords(
            [RecordOperation(.create, share: share)], in: zone, database: .private, atomic: false, as: alice)
        guard case .savedShare(let savedShare)? = saved.first, let url = savedShare.url else {
            Issue.record("the share was not saved: \(saved)")
            return
        }
        let stored = try await queue.read { db in try String.fetchOne(db, sql: "SELECT role FROM participant") }
        #expect(stored == ParticipantRole.privateUser.rawValue)
        try await queue.write { db in try db.execute(sql: "UPDATE participant SET role = 'BOGUS'") }
        let outcomes = try await store.lookupRecords([zoneShareRecordName], in: zone, database: .private, as: alice)
        let error = try #require(outcomes.first?.error, "the damaged row was read as a share: \(outcomes)")
        #expect(error.code == .internalError)
        #expect(error.reason.contains("unknown role, permission or status") && error.reason.contains("BOGUS"))
        // A share whose public permission is not a word the store knows: its zone cannot be read, nor the share
        // accepted by its URL.
        try await queue.write { db in
            try db.execute(sql: "UPDATE participant SET role = ?", arguments: [ParticipantRole.privateUser.rawValue])
            try db.execute(sql: "UPDATE share SET publicPermission = 'WIDE_OPEN'")
        }
        let read = try await store.lookupRecords([zoneShareRecordName], in: zone, database: .private, as: alice)
        let damaged = try #require(read.first?.error, "the damaged share was read: \(read)")
        #expect(damaged.code == .internalError && damaged.reason.contains("'WIDE_OPEN'"), "\(damaged)")
        await #expect {
            _ = try await store.acceptShare(url: url, as: bob)
        } throws: { error in
            (error as? ShareError)?.code == .internalError && "\(error)".contains("'WIDE_OPEN'")
        }
    }
}
