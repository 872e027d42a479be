import Foundation
import Logging
import ShareKit
import ShareStoreSQLite
import SharingReport

/// A real SQLite store (in memory) with the shapes a report must draw: a zone shared whole with an
/// administrator, a read-write participant, a pending one and one who left; a hierarchy share; and a public
/// share someone joined through its URL.
struct SharingFixture {
    let store: SQLiteStore
    var users: [String: User] = [:]

    static let people = ["alice", "bob", "carol", "dana", "erin", "frank"]

    init() async throws {
        store = try SQLiteStore.inMemory(logger: Logger(label: "test"))
        for handle in Self.people {
            users[handle] = try await store.signIn(email: "\(handle)@example.com", name: handle.capitalized)
        }
        let alice = id("alice")
        let lists = ZoneID(zoneName: "FamilyLists")
        let trips = ZoneID(zoneName: "Trips")
        let board = ZoneID(zoneName: "Board")
        _ = try await store.modifyZones(
            [.init(.create, lists), .init(.create, trips), .init(.create, board)], in: .private, as: alice)
        var zoneShare = Share.zoneWide(lists, title: "Family lists")
        zoneShare.participants = [
            Participant(userRecordName: id("dana"), role: .administrator, permission: .readWrite),
            Participant(userRecordName: id("bob"), permission: .readWrite),
            Participant(userRecordName: id("carol"), permission: .readOnly),
            Participant(userRecordName: id("erin"), permission: .readOnly),
        ]
        let listURL = try await save(share: zoneShare, with: [], in: lists, as: alice)
        let hierarchy = Share(
            recordName: "", zoneID: trips, rootRecordName: "italy", title: "Italy",
            participants: [Participant(userRecordName: id("bob"), permission: .readOnly)])
        let tripURL = try await save(
            share: hierarchy, with: [Record(recordName: "italy", recordType: "Trip", zoneID: trips)], in: trips,
            as: alice)
        let boardURL = try await save(
            share: Share.zoneWide(board, publicPermission: .readOnly), with: [], in: board, as: alice)
        for handle in ["dana", "bob", "erin"] {
            _ = try await store.acceptShare(url: listURL, as: id(handle))
        }
        _ = try await store.acceptShare(url: tripURL, as: id("bob"))
        _ = try await store.acceptShare(url: boardURL, as: id("frank"))
        try await store.leaveShare(
            recordName: zoneShareRecordName, in: ZoneID(zoneName: "FamilyLists", ownerRecordName: alice),
            as: id("erin"))
    }

    private func save(share: Share, with records: [Record], in zone: ZoneID, as owner: UserRecordName) async throws
        -> String
    {
        let outcomes = try await store.modifyRecords(
            records.map { RecordOperation(.create, $0) } + [RecordOperation(.create, share: share)], in: zone,
            database: .private, atomic: true, as: owner)
        guard case .savedShare(let saved)? = outcomes.last, let url = saved.url else {
            throw FixtureFailure("the fixture's share was not saved: \(outcomes)")
        }
        return url
    }

    /// The record name of the user `handle` names.
    func id(_ handle: String) -> UserRecordName { users[handle]?.recordName ?? "" }

    /// The users as a recipe names them: handle, email, record name.
    var sharingUsers: [SharingUser] {
        Self.people.map { handle in
            SharingUser(recordName: id(handle), email: users[handle]?.email, name: users[handle]?.name, handle: handle)
        }
    }

    func snapshot() async throws -> SharingSnapshot {
        try await SharingSnapshotReader(store: store).read(users: sharingUsers)
    }
}

struct FixtureFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
