import Foundation
import Logging
import ShareKit
import ShareStoreSQLite
import Testing

/// A change token names the store's life it was handed out in: after a reset, an old token is refused
/// rather than read as "nothing changed" (which would hide everything the reset removed).
@Suite struct ChangeTokenEpochTests {
    @Test func aTokenFromBeforeAResetIsRefused() async throws {
        let store = try SQLiteStore.inMemory(logger: Logger(label: "test"))
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        _ = try await store.modifyZones([.init(.create, ZoneID(zoneName: "Lists"))], in: .private, as: alice)
        let before = try await store.databaseChanges(in: .private, since: nil, as: alice).token
        #expect(try await store.databaseChanges(in: .private, since: before, as: alice).changedZones.isEmpty)
        try await store.reset()
        let again = try await store.signIn(email: "alice@example.com", name: nil).recordName
        _ = try await store.modifyZones([.init(.create, ZoneID(zoneName: "Lists"))], in: .private, as: again)
        do {
            _ = try await store.databaseChanges(in: .private, since: before, as: again)
            Issue.record("a token from before the reset was taken")
        } catch let error as ShareError {
            #expect(error.code == .badRequest)
            #expect(error.reason.contains("before this store was reset"), "\(error)")
        }
        await #expect(throws: ShareError.self) {
            try await store.zoneChanges(
                ZoneID(zoneName: "Lists"), in: .private, since: before, resultsLimit: nil, as: again)
        }
        // A token of this life reads as before; one without an epoch (an older store's) is taken as this one's.
        let now = try await store.databaseChanges(in: .private, since: nil, as: again)
        #expect(now.changedZones.map(\.zoneName).contains("Lists"))
        #expect(
            try await store.databaseChanges(in: .private, since: ChangeToken(rawValue: "s0"), as: again).changedZones
                == now.changedZones)
    }
}
