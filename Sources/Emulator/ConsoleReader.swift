import ShareKit
import SharingReport

/// What the console reads from the store, always as a user, through the `Store` protocol: the store answers
/// with what that user may see (its access rules decide), and the console adds no rule of its own. Nothing is
/// written and nobody is signed in (signing in creates users).
struct ConsoleReader: Sendable {
    /// The records and shares of one zone, as one user sees them.
    struct ZoneContents: Sendable {
        var records: [Record]
        var shares: [Share]
    }

    /// A record in the change history, with where it is.
    struct HistoryEntry: Sendable {
        var record: Record
        var database: DatabaseScope
        /// The user whose view it was read in, for the link to its zone page.
        var reader: UserRecordName
        /// The zone as that user's database names it.
        var zoneID: ZoneID
    }

    let store: any Store

    /// Every user, where the store can list them (`UserListing`); nil where it cannot.
    func listedUsers() async throws -> [User]? {
        guard let listing = store as? any UserListing else { return nil }
        return try await listing.allUsers()
    }

    func zones(_ database: DatabaseScope, as user: UserRecordName) async throws -> [Zone] {
        try await store.listZones(in: database, as: user)
    }

    /// Everything in a zone that `user` may see, read from the change feed from its beginning, page by page.
    func contents(of zoneID: ZoneID, in database: DatabaseScope, as user: UserRecordName) async throws
        -> ZoneContents
    {
        let whole = try await store.wholeZone(zoneID, in: database, as: user)
        return ZoneContents(
            records: whole.records.sorted { $0.recordName < $1.recordName },
            shares: whole.shares.sorted { $0.recordName < $1.recordName })
    }

    /// The shares that `viewer` sees: those of its own zones and those in its shared database, with the owners
    /// named. Nil `viewer`: every share of `users`, each read as its owner.
    func snapshot(as viewer: User?, users: [User]) async throws -> SharingSnapshot {
        let reader = SharingSnapshotReader(store: store)
        guard let viewer else {
            return try await reader.read(users: users.map(Self.sharingUser))
        }
        var shares = try await reader.shares(ownedBy: viewer.recordName)
        for zone in try await zones(.shared, as: viewer.recordName) {
            shares += try await contents(of: zone.zoneID, in: .shared, as: viewer.recordName).shares
        }
        var people = [Self.sharingUser(viewer)]
        // The owners of what is shared with the viewer get rows too, named as CloudKit names a share's owner
        // to its participants (CKShare.owner carries the owner's identity).
        for share in shares where !people.contains(where: { $0.recordName == share.ownerRecordName }) {
            let owner = try? await store.currentUser(as: share.ownerRecordName)
            people.append(SharingUser(recordName: share.ownerRecordName, email: owner?.email, name: owner?.name))
        }
        return SharingSnapshot(users: people, shares: shares)
    }

    /// Records newest change first: as `viewer`, its private, shared and public databases; for the whole
    /// store, each user's private database read as that user, and the public database. At most `limit`.
    func history(as viewer: UserRecordName?, users: [User], limit: Int) async throws -> [HistoryEntry] {
        var entries: [HistoryEntry] = []
        let readers = viewer.map { [$0] } ?? users.map(\.recordName)
        for reader in readers {
            let databases: [DatabaseScope] = viewer == nil ? [.private] : [.private, .shared]
            for database in databases {
                for zone in try await zones(database, as: reader) {
                    for record in try await contents(of: zone.zoneID, in: database, as: reader).records {
                        entries.append(
                            HistoryEntry(record: record, database: database, reader: reader, zoneID: zone.zoneID))
                    }
                }
            }
        }
        if let anyone = viewer ?? users.first?.recordName {
            for zone in try await zones(.public, as: anyone) {
                for record in try await contents(of: zone.zoneID, in: .public, as: anyone).records {
                    entries.append(HistoryEntry(record: record, database: .public, reader: anyone, zoneID: zone.zoneID))
                }
            }
        }
        entries.sort {
            ($0.record.modified?.timestamp ?? 0, $0.record.recordName) > (
                $1.record.modified?.timestamp ?? 0,
                $1.record.recordName
            )
        }
        return Array(entries.prefix(limit))
    }

    /// How the console names people: the email address where it is known, else the display name.
    static func label(_ user: User) -> String { user.email ?? user.name ?? user.recordName }

    static func sharingUser(_ user: User) -> SharingUser {
        SharingUser(recordName: user.recordName, email: user.email, name: user.name)
    }
}
