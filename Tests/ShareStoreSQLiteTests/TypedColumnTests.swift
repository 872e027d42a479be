import Foundation
import GRDB
import ShareKit
import Testing

@testable import ShareStoreSQLite

/// Enumerated columns hold ShareKit's words; a word the store does not know is an error, never a default.
@Suite("Typed columns")
struct TypedColumnTests {
    @Test("a participant row with a role the store does not know fails loudly instead of reading as a default")
    func unknownWordsFailLoudly() async throws {
        let queue = try DatabaseQueue()
        let store = try SQLiteStore(writer: queue)
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
        let zone = ZoneID(zoneName: "Z")
        _ = try await store.modifyZones([ZoneOperation(.create, zone)], in: .private, as: alice)
        var share = Share.zoneWide(zone)
        share.participants = [Participant(userRecordName: bob, permission: .readOnly)]
        _ = try await store.modifyRecords(
            [RecordOperation(.create, share: share)], in: zone, database: .private, atomic: false, as: alice)
        let stored = try await queue.read { db in try String.fetchOne(db, sql: "SELECT role FROM participant") }
        #expect(stored == ParticipantRole.privateUser.rawValue)
        try await queue.write { db in try db.execute(sql: "UPDATE participant SET role = 'BOGUS'") }
        let outcomes = try await store.lookupRecords([zoneShareRecordName], in: zone, database: .private, as: alice)
        let error = try #require(outcomes.first?.error, "the damaged row was read as a share: \(outcomes)")
        #expect(error.code == .internalError)
        #expect(error.reason.contains("unknown role, permission or status") && error.reason.contains("BOGUS"))
    }
}
