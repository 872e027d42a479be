import ShareKit

/// Reads the shares of some owners from any store, as each owner sees their private database.
///
/// One zone listing per owner, then each zone's change feed from the beginning (the shares come with the
/// records; the store pages them). Nothing is written: reading signs no one in.
public struct SharingSnapshotReader: Sendable {
    public let store: any Store

    public init(store: any Store) {
        self.store = store
    }

    /// The shares of every zone of `users` (each read as its own owner), and `users` as the snapshot's users.
    /// - Throws: the store's `ShareError` when it cannot be read.
    public func read(users: [SharingUser]) async throws -> SharingSnapshot {
        var shares: [Share] = []
        for user in users {
            shares += try await self.shares(ownedBy: user.recordName)
        }
        return SharingSnapshot(users: users, shares: shares)
    }

    /// The shares in the private zones of `owner`.
    public func shares(ownedBy owner: UserRecordName) async throws -> [Share] {
        var shares: [Share] = []
        for zone in try await store.listZones(in: .private, as: owner) {
            for var share in try await store.wholeZone(zone.zoneID, in: .private, as: owner).shares {
                // The owner sees its own zones under the default owner name; the report names the owner.
                share.zoneID = share.zoneID.resolvingOwner(to: owner)
                if share.ownerRecordName == defaultOwnerName { share.ownerRecordName = owner }
                shares.append(share)
            }
        }
        return shares
    }
}
