import ShareKit

// MARK: - The owners of a plan

extension Plan {
    /// The handles of the plan's owners: its owner first, then the others in the order of their zones.
    public var owners: [String] {
        var owners = [owner.handle]
        for change in changes {
            let other = owner(of: change)
            if !owners.contains(other) { owners.append(other) }
        }
        for other in (zoneOwners ?? [:]).values.sorted() where !owners.contains(other) { owners.append(other) }
        return owners
    }

    /// The handle of the owner of `change`'s zone: the plan's owner unless `zoneOwners` says another. A
    /// subscription on a zone of a private database is that zone owner's (only the owner watches it there):
    /// it is saved after that owner's zones are written, and its `fires_once` kind is saved again after their
    /// writes fire it.
    public func owner(of change: PlannedChange) -> String {
        guard let zoneOwners, change.database == .private else { return owner.handle }
        return zoneOwners[change.zoneName] ?? owner.handle
    }

    /// The plan taken apart by owner, the plan's owner first: each part a plan of that owner's zones as that
    /// owner, applied as a one-owner plan is. `[self]` for a plan with one owner.
    package var ownerParts: [Plan] {
        guard let zoneOwners, !zoneOwners.isEmpty else { return [self] }
        var parts: [String: Plan] = [:]
        let handles = owners
        for handle in handles {
            var part = self
            part.zoneOwners = nil
            part.afterApply = AfterApplyByOwner()
            part.afterApply[handle] = afterApply[handle]
            part.changes = []
            part.notes = []
            part.waiting = []
            part.basis.zones = []
            part.rearm = rearm?.filter { planned in
                let zoneOwner =
                    planned.database == .private
                    ? planned.subscription.zoneID.flatMap { zoneOwners[$0.zoneName] } : nil
                return (zoneOwner ?? owner.handle) == handle
            }
            if part.rearm?.isEmpty == true { part.rearm = nil }
            if handle != owner.handle {
                guard let user = users.first(where: { $0.handle == handle }) else { continue }
                part.owner = user
                // The users' phone numbers and discoverability are set once, by the recipe owner's part.
                part.users = users.map { user in
                    var user = user
                    user.phone = nil
                    user.discoverable = nil
                    return user
                }
                part.basis.publicRecordNames = []
                part.basis.publicTags = [:]
                part.schema = nil
            }
            parts[handle] = part
        }
        for change in changes {
            parts[self.owner(of: change)]?.changes.append(change)
        }
        for zone in basis.zones {
            parts[zoneOwners[zone.zoneName] ?? owner.handle]?.basis.zones.append(zone)
        }
        return handles.compactMap { parts[$0] }
    }
}
