import Foundation
import ShareKit
import ShareStoreSQLite
import Testing

/// What the embedded store answers about a share before it is accepted (`resolveShare`), as published captures
/// of Apple's live service show `records/resolve` answering it (shared/CLOUDKIT.md, "What the live service
/// answers"); `serve`'s side is in Tests/EmulatorTests/LiveAnswerShapeTests.swift.
@Suite("Share metadata as the live service answers it, in the embedded store")
struct LiveShareMetadataTests {
    let store: SQLiteStore
    let alice: UserRecordName
    let bob: UserRecordName
    let carol: UserRecordName
    let zone = ZoneID(zoneName: "Lists")

    init() async throws {
        store = try SQLiteStore.inMemory()
        alice = try await store.signIn(email: "alice@example.com", name: "Alice Appleseed").recordName
        bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
        carol = try await store.signIn(email: "carol@example.com", name: nil).recordName
    }

    /// Alice's zone shared with Bob, read-only: the share's URL.
    func sharedTrip() async throws -> String {
        _ = try await store.modifyZones([ZoneOperation(.create, zone)], in: .private, as: alice)
        var share = Share.zoneWide(zone, title: "Trip")
        share.participants = [Participant(userRecordName: bob, email: "bob@example.com", permission: .readOnly)]
        let saved = try await store.modifyRecords(
            [
                .init(.create, Record(recordName: "milk", recordType: "Item", zoneID: zone)),
                .init(.create, share: share),
            ],
            in: zone, database: .private, atomic: true, as: alice)
        guard case .savedShare(let savedShare) = saved[1], let url = savedShare.url else {
            Issue.record("the share was not saved: \(saved)")
            return ""
        }
        return url
    }

    @Test("the owner resolving their own share is answered as its owner: OWNER, ACCEPTED, READ_WRITE")
    func theOwnerIsTheirOwnParticipant() async throws {
        let url = try await sharedTrip()
        let metadata = try await store.resolveShare(url: url, as: alice)
        let own = try #require(metadata.participant, "the owner has an entry of their own")
        #expect(own.userRecordName == alice)
        #expect(own.role == .owner)
        #expect(own.acceptance == .accepted)
        #expect(own.permission == .readWrite)
    }

    @Test("the owner is named with the address and name the store knows, for the owner and for an invitee")
    func theOwnerIsNamed() async throws {
        let url = try await sharedTrip()
        for caller in [alice, bob] {
            let metadata = try await store.resolveShare(url: url, as: caller)
            let owner = try #require(metadata.owner)
            #expect(owner.userRecordName == alice)
            #expect(owner.email == "alice@example.com")
            #expect(owner.name == "Alice Appleseed")
            #expect(owner.role == .owner)
        }
        // An invitee's own entry is theirs, as before; the owner is not listed among the invitees.
        let invited = try await store.resolveShare(url: url, as: bob)
        #expect(invited.participant?.userRecordName == bob)
        #expect(invited.participant?.role == .privateUser)
        #expect(invited.share.participants.allSatisfy { $0.role != .owner })
    }
}
