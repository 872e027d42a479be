import ShareKit
import SharingReport

/// Who can see what in the recipe's zones before and after a plan: the shares the plan read, and the shares
/// as the plan leaves them. The access matrix of each, and the cells that change, come from `AccessRules`
/// (through `AccessMatrix`); the plan only says what the shares become.
public struct PlanAccess: Sendable, Hashable, Codable {
    public var before: SharingSnapshot
    public var after: SharingSnapshot

    public init(before: SharingSnapshot, after: SharingSnapshot) {
        self.before = before
        self.after = after
    }

    /// The cells of the access matrix that the plan changes.
    public var changes: [AccessMatrix.Change] {
        AccessMatrix.changes(from: AccessMatrix(before), to: AccessMatrix(after))
    }

    /// Whether the plan changes any share: its participants, their permissions or status, its public
    /// permission or title, or whether it exists.
    public var changesSharing: Bool { !SharingGraph(after, before: before, onlyChanged: true).edges.isEmpty }

    /// The record name a user the store does not have yet stands under until apply creates them.
    static func placeholder(handle: String) -> UserRecordName { "(new) \(handle)" }

    /// The before and after of `changes` over the live shares of the recipe's zones.
    /// - Parameters:
    ///   - liveShares: the shares of the zones the plan read, as their owner sees them.
    ///   - owner: the owner's record name; empty when the store does not have the owner yet.
    package static func make(liveShares: [Share], changes: [PlannedChange], users: [PlannedUser], owner: PlannedUser)
        -> PlanAccess
    {
        func recordName(_ user: UserRecordName, handle: String) -> UserRecordName {
            user.isEmpty ? placeholder(handle: handle) : user
        }
        let ownerName = recordName(owner.recordName, handle: owner.handle)
        let sharingUsers = ([owner] + users.filter { $0.handle != owner.handle }).map {
            SharingUser(
                recordName: recordName($0.recordName, handle: $0.handle), email: $0.email, name: $0.name,
                handle: $0.handle)
        }
        func key(_ zone: String, _ root: String?) -> String { "\(zone)/\(root ?? "")" }
        var shares: [String: Share] = [:]
        for var share in liveShares {
            share.zoneID = share.zoneID.resolvingOwner(to: ownerName)
            share.ownerRecordName = ownerName
            shares[key(share.zoneID.zoneName, share.rootRecordName)] = share
        }
        let before = SharingSnapshot(users: sharingUsers, shares: Array(shares.values))
        for change in changes {
            switch (change.kind, change.action) {
            case (.zone, .delete):
                shares = shares.filter { $0.value.zoneID.zoneName != change.zoneName }
            case (.share, .delete):
                shares[key(change.zoneName, change.recordName)] = nil
            case (.record, .delete):
                // Deleting a hierarchy's root deletes its share.
                if let root = change.recordName { shares[key(change.zoneName, root)] = nil }
            case (.share, _), (.participant, _):
                guard let planned = change.share else { continue }
                shares[key(change.zoneName, planned.rootRecordName)] = Share(
                    recordName: planned.recordName ?? "",
                    zoneID: ZoneID(zoneName: change.zoneName, ownerRecordName: ownerName),
                    rootRecordName: planned.rootRecordName, title: planned.title,
                    publicPermission: planned.publicPermission, ownerRecordName: ownerName,
                    participants: planned.participants.map { participant in
                        Participant(
                            participantID: participant.participantID,
                            userRecordName: recordName(participant.userRecordName, handle: participant.handle),
                            email: participant.email, name: participant.name, role: participant.role,
                            permission: participant.permission,
                            acceptance: participant.accept ? .accepted : participant.acceptance)
                    }, url: planned.url)
            case (.zone, _), (.record, _), (.subscription, _):
                continue
            }
        }
        return PlanAccess(before: before, after: SharingSnapshot(users: sharingUsers, shares: Array(shares.values)))
    }
}
