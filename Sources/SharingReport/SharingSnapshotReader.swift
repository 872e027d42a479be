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
            var byName: [String: Share] = [:]
            var token: ChangeToken? = nil
            while true {
                let changes = try await store.zoneChanges(
                    zone.zoneID, in: .private, since: token, resultsLimit: nil, as: owner)
                for var share in changes.changedShares {
                    // The owner sees its own zones under the default owner name; the report names the owner.
                    share.zoneID = share.zoneID.resolvingOwner(to: owner)
                    if share.ownerRecordName == defaultOwnerName { share.ownerRecordName = owner }
                    byName[share.recordName] = share
                }
                for name in changes.deletedRecordNames { byName[name] = nil }
                if !changes.moreComing || changes.token == token { break }
                token = changes.token
            }
            shares += byName.values
        }
        return shares
    }
}
