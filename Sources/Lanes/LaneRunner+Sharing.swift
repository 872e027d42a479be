import Recipe
import ShareKit

// The steps that take a user into a share or out of it: `accept` (by the share's zone and record, or by its
// URL as a person who opened the link) and `leave`, and the owner's `remove` and `permission`.
extension LaneRunner {
    func accept(zone: String, record: String?, step: Step, recipe: Recipe, _ session: LaneSession) async throws
        -> String?
    {
        let (handle, actor) = try await session.actor(of: step, in: recipe)
        let owner = try await session.owner(ofZone: zone, in: recipe, at: step.location)
        let what = StepSummary.address(zone, record)
        if actor.recordName == owner.recordName {
            throw LaneError.stepFailed(
                action: "accept \(what)",
                reason: "\(handle) owns this share; a participant accepts it (add `as: HANDLE` to the step)",
                location: step.location)
        }
        let share = try await session.namedShare(zone: zone, record: record, owner: owner, at: step.location)
        if share.participant(actor.recordName)?.acceptance == .accepted {
            return "already accepted"
        }
        guard let url = share.url ?? share.shortGUID else {
            throw LaneError.stepFailed(
                action: "accept \(what)", reason: "the store handed out no URL for this share (\(store.displayName))",
                location: step.location)
        }
        let metadata = try await store.acceptShare(url: url, as: actor.recordName)
        let permission = metadata.participant?.permission ?? metadata.share.publicPermission
        return "\(permission.recipeName) in \(handle)'s shared database"
    }

    func leave(zone: String, record: String?, step: Step, recipe: Recipe, _ session: LaneSession) async throws
        -> String?
    {
        let (handle, actor) = try await session.actor(of: step, in: recipe)
        let owner = try await session.owner(ofZone: zone, in: recipe, at: step.location)
        let share = try await session.namedShare(zone: zone, record: record, owner: owner, at: step.location)
        if actor.recordName == owner.recordName {
            // The owner leaving its own share stops sharing, as CloudKit's "Stop Sharing" deletes the share.
            let outcomes = try await store.modifyRecords(
                [RecordOperation(.forceDelete, share: share)], in: ZoneID(zoneName: zone), database: .private,
                atomic: true, as: owner.recordName)
            if let error = outcomes.first?.error { throw error }
            return "stopped sharing: the share is deleted for everyone"
        }
        // The store's rule, whoever leaves: a participant (pending or accepted) is removed; leaving again, or
        // leaving a share one is not part of, is `NOT_FOUND`, which `expect_error:` can name (Docs/Sharing.md).
        try await store.leaveShare(
            recordName: share.recordName, in: ZoneID(zoneName: zone, ownerRecordName: owner.recordName),
            as: actor.recordName)
        return "removed from \(handle)'s shared database"
    }

    /// `remove` (no `permission`) and `permission`: the step's user takes a participant off the share, or gives
    /// one another permission, by saving the whole share with its participants edited, as a CloudKit owner
    /// does and as `apply` does. The store judges who may: the owner (and an administrator, within its
    /// limits); anyone else is refused as CloudKit refuses them, and the share stays as it was.
    func changeMembership(
        zone: String, record: String?, participant: String, to permission: Permission?, step: Step, recipe: Recipe,
        _ session: LaneSession
    ) async throws -> String? {
        let (_, actor) = try await session.actor(of: step, in: recipe)
        let owner = try await session.owner(ofZone: zone, in: recipe, at: step.location)
        let target = try await session.user(participant, in: recipe, at: step.location)
        let summary = StepSummary.text(of: step, owner: recipe.owner)
        let what = StepSummary.address(zone, record)
        var share = try await session.namedShare(zone: zone, record: record, owner: owner, at: step.location)
        let index = share.participants.firstIndex {
            $0.userRecordName == target.recordName && $0.acceptance != .removed && $0.role != .owner
        }
        if let index, share.participants[index].role == .publicUser {
            throw LaneError.stepFailed(
                action: summary,
                reason: "\(participant) joined through the share's URL as a public user, whose permission is the "
                    + "share's public permission and who stays while the share is public; change the share's "
                    + "`public:` permission in the recipe and apply",
                location: step.location)
        }
        let detail: String
        if let permission {
            guard let index else {
                throw LaneError.stepFailed(
                    action: summary,
                    reason: "\(participant) is not a participant of the share of \(what); list them under the "
                        + "share's `participants:` and apply, or add them back with `- apply` after a `remove`",
                    location: step.location)
            }
            let before = share.participants[index].permission
            share.participants[index].permission = permission
            detail =
                before == permission
                ? "\(participant) already has \(permission.recipeName)"
                : "\(participant): \(before.recipeName) → \(permission.recipeName)"
        } else if let index {
            share.participants.remove(at: index)
            detail = "\(participant) can no longer see \(what)"
        } else if actor.recordName == owner.recordName {
            // Nothing to take off: a lane run again finds the participant already gone, as `delete` finds a
            // record already absent.
            return "\(participant) is not a participant (already removed)"
        } else {
            // Someone else asking is still asked of the store, which judges them whatever the share holds.
            detail = "\(participant) is not a participant"
        }
        let (database, zoneID) = session.place(ofZone: zone, for: actor, owner: owner)
        share.zoneID = zoneID
        let outcomes = try await store.modifyRecords(
            [RecordOperation(.update, share: share)], in: zoneID, database: database, atomic: true,
            as: actor.recordName)
        if let error = outcomes.first?.error { throw error }
        if permission == nil, case .savedShare(let saved)? = outcomes.first,
            let kept = saved.participant(target.recordName), kept.acceptance != .removed
        {
            throw LaneError.stepFailed(
                action: summary, reason: "the store kept \(participant) on the share (\(kept.acceptance.recipeName))",
                location: step.location)
        }
        return detail
    }

    /// `accept: { as, url }`: the user accepts the share behind the URL, as one who opened the link does; the
    /// runner does not need to know whose share it is or where it lives.
    func accept(url: String, step: Step, recipe: Recipe, _ session: LaneSession) async throws -> String? {
        let (handle, actor) = try await session.actor(of: step, in: recipe)
        guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
            throw LaneError.stepFailed(
                action: "accept \(url)",
                reason:
                    "`url:` must be a share's URL (https://…), such as `\"${share_url:ZONE}\"` or a value an earlier step registered",
                location: step.location)
        }
        let found = try await store.resolveShare(url: url, as: actor.recordName)
        let what = StepSummary.address(found.zoneID.zoneName, found.rootRecordName)
        if found.share.ownerRecordName == actor.recordName {
            throw LaneError.stepFailed(
                action: "accept \(what)",
                reason: "\(handle) owns this share; a participant accepts it (add `as: HANDLE` to the step)",
                location: step.location)
        }
        if found.participant?.acceptance == .accepted {
            return "\(what): already accepted"
        }
        let metadata = try await store.acceptShare(url: url, as: actor.recordName)
        let permission = metadata.participant?.permission ?? metadata.share.publicPermission
        return "\(what): \(permission.recipeName) in \(handle)'s shared database"
    }
}
