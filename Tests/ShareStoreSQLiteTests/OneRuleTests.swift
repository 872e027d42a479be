import Foundation
import ShareKit
import ShareStoreSQLite
import Testing

/// Every way of reaching the shared database asks the same access rule, and a share never holds a
/// participant the rules would misread.
@Suite("One access rule for every view")
struct OneRuleTests {
    /// A zone of alice's shared zone-wide with bob as `permission`, saved as the wire would save it, and bob
    /// accepting.
    static func sharedZone(bobPermission: Permission, role: ParticipantRole = .privateUser) async throws -> (
        SQLiteStore, alice: User, bob: User, share: RecordOutcome
    ) {
        let store = try SQLiteStore.inMemory()
        let alice = try await store.signIn(email: "alice@example.com", name: nil)
        let bob = try await store.signIn(email: "bob@example.com", name: nil)
        _ = try await store.modifyZones(
            [ZoneOperation(.create, ZoneID(zoneName: "Z"))], in: .private, as: alice.recordName)
        let share = Share.zoneWide(ZoneID(zoneName: "Z"))
        var proposed = share
        proposed.participants = [
            Participant(userRecordName: bob.recordName, role: role, permission: bobPermission)
        ]
        let outcome = try await store.modifyRecords(
            [RecordOperation(.create, share: proposed)], in: ZoneID(zoneName: "Z"), database: .private, atomic: false,
            as: alice.recordName)[0]
        if let url = outcome.share?.url { _ = try await store.acceptShare(url: url, as: bob.recordName) }
        return (store, alice, bob, outcome)
    }

    @Test(
        "a participant with permission NONE who accepts sees the zone nowhere: list, lookup and both change feeds agree"
    )
    func permissionNoneIsInvisibleEverywhere() async throws {
        let (store, alice, bob, _) = try await Self.sharedZone(bobPermission: .none)
        let zoneID = ZoneID(zoneName: "Z", ownerRecordName: alice.recordName)
        #expect(try await store.listZones(in: .shared, as: bob.recordName).isEmpty)
        let lookup = try await store.lookupZones([zoneID], in: .shared, as: bob.recordName)
        #expect(lookup.count == 1)
        if case .success = lookup[0] { Issue.record("zones/lookup found a zone that zones/list does not list") }
        #expect(try await store.databaseChanges(in: .shared, since: nil, as: bob.recordName).changedZones.isEmpty)
        await #expect(throws: ShareError.self) {
            _ = try await store.zoneChanges(zoneID, in: .shared, since: nil, resultsLimit: nil, as: bob.recordName)
        }
    }

    @Test("a read-write participant who accepts sees the zone everywhere: list, lookup and both change feeds agree")
    func readWriteIsVisibleEverywhere() async throws {
        let (store, alice, bob, _) = try await Self.sharedZone(bobPermission: .readWrite)
        let zoneID = ZoneID(zoneName: "Z", ownerRecordName: alice.recordName)
        #expect(try await store.listZones(in: .shared, as: bob.recordName).map(\.zoneID) == [zoneID])
        let lookup = try await store.lookupZones([zoneID], in: .shared, as: bob.recordName)
        if case .failure(let error) = lookup[0] { Issue.record("zones/lookup refused: \(error)") }
        #expect(try await store.databaseChanges(in: .shared, since: nil, as: bob.recordName).changedZones == [zoneID])
        let changes = try await store.zoneChanges(
            zoneID, in: .shared, since: nil, resultsLimit: nil, as: bob.recordName)
        #expect(changes.changedShares.count == 1)
    }

    @Test("a read-only administrator is refused when the share is saved, and changes nothing")
    func readOnlyAdministratorIsRefused() async throws {
        let (store, alice, bob, outcome) = try await Self.sharedZone(bobPermission: .readOnly, role: .administrator)
        #expect(outcome.error?.code == .badRequest)
        #expect(outcome.error?.reason.contains("an administrator has read-write permission") == true)
        #expect(try await store.share(zoneShareRecordName, in: ZoneID(zoneName: "Z"), as: alice.recordName) == nil)
        let write = try await store.create(
            todo("t", in: ZoneID(zoneName: "Z", ownerRecordName: alice.recordName), title: "x"),
            in: ZoneID(zoneName: "Z", ownerRecordName: alice.recordName), .shared, as: bob.recordName)
        #expect(write.code == .zoneNotFound || write.code == .accessDenied)
    }

    @Test("an administrator that an older store holds read-only gets no more than read-only access")
    func administratorAccessIsItsPermission() {
        let share = Share(
            recordName: zoneShareRecordName, zoneID: ZoneID(zoneName: "Z"), ownerRecordName: "_alice",
            participants: [
                Participant(userRecordName: "_bob", role: .administrator, permission: .readOnly, acceptance: .accepted)
            ])
        #expect(AccessRules.access(caller: "_bob", zoneOwner: "_alice", share: share) == .readOnly)
        #expect(
            AccessRules.update(caller: "_bob", zoneOwner: "_alice", share: share, subject: "Z/t")?.code == .accessDenied
        )
    }
}
