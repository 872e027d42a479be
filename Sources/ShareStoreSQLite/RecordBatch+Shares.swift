import Foundation
import GRDB
import ShareKit

// MARK: - Shares

extension RecordBatch {
    /// Saves or deletes one share.
    /// - Throws: `ShareError` for an operation the rules refuse (the caller's savepoint undoes what it wrote).
    mutating func applyShare(_ kind: OperationKind, _ proposed: Share) throws -> RecordOutcome {
        guard context.scope != .public else {
            throw ShareError(.badRequest, "the public database holds no shares", subject: proposed.recordName)
        }
        guard context.zone.name != defaultZoneName else {
            throw ShareError(
                .badRequest, "shares live in custom zones, not in \(defaultZoneName); create a zone and share it",
                subject: subject(proposed.recordName))
        }
        // A deletion names a share by its record name alone: one that is not there is missing, as any record
        // (a client sending again a deletion whose answer was lost hears NOT_FOUND, not a naming rule).
        if kind.isDelete, !proposed.recordName.isEmpty, proposed.rootRecordName == nil,
            context.sharesByName[proposed.recordName] == nil
        {
            throw ShareError(
                .notFound, "no share named \(proposed.recordName) in this zone", subject: subject(proposed.recordName))
        }
        let share = try named(proposed)
        let name = share.recordName
        let subject = subject(name)
        let existing = context.sharesByName[name]
        if let existing, kind != .create, context.scope == .shared,
            let refusal = AccessRules.read(caller: caller, zoneOwner: owner, share: existing, subject: subject)
        {
            throw refusal
        }
        switch kind {
        case .create:
            if existing != nil || (share.rootRecordName.flatMap { context.sharesByRoot[$0] } != nil) {
                throw ShareError(.exists, "this share already exists", subject: subject)
            }
            return try createShare(share)
        case .update, .replace, .forceUpdate, .forceReplace:
            guard let existing else {
                if kind == .forceUpdate || kind == .forceReplace { return try createShare(share) }
                throw ShareError(.notFound, "no share named \(name) in this zone", subject: subject)
            }
            // Permission before the change tag (`AccessRules`): one who may not change the share at all is
            // refused as such; what an administrator's proposal may change is judged once it is merged.
            if let refusal = AccessRules.updateShare(
                caller: caller, zoneOwner: owner, existing: existing, proposed: existing, subject: subject)
            {
                throw refusal
            }
            if kind.checksChangeTag, let current = existing.changeTag {
                try Self.checkTag(share.changeTag, current: current, subject: subject)
            }
            return try updateShare(existing, proposed: share)
        case .delete, .forceDelete:
            guard let existing else {
                throw ShareError(.notFound, "no share named \(name) in this zone", subject: subject)
            }
            if let refusal = AccessRules.deleteShare(
                caller: caller, zoneOwner: owner, share: existing, subject: subject)
            {
                throw refusal
            }
            if kind.checksChangeTag, let current = existing.changeTag {
                try Self.checkTag(share.changeTag, current: current, subject: subject)
            }
            try removeShare(existing)
            return .deleted(recordName: name)
        }
    }

    /// The proposed share with its record name and root as the zone knows them: a share named by record
    /// name only (as Web Services names it in a deletion) is the share of that name; an unnamed hierarchy
    /// share takes its root's share name, an unnamed zone-wide share `cloudkit.zoneshare`.
    private func named(_ proposed: Share) throws -> Share {
        var share = proposed
        if share.rootRecordName == nil, let known = context.sharesByName[share.recordName] {
            share.rootRecordName = known.rootRecordName
        }
        if let root = share.rootRecordName {
            if share.recordName == zoneShareRecordName {
                throw ShareError(
                    .badRequest, "\(zoneShareRecordName) names a zone-wide share, which has no root record",
                    subject: subject(root))
            }
            if share.recordName.isEmpty {
                share.recordName =
                    context.sharesByRoot[root]?.recordName
                    ?? StableName.hierarchyShareRecordName(zoneName: context.zone.name, rootRecordName: root)
            }
        } else {
            if share.recordName.isEmpty { share.recordName = zoneShareRecordName }
            if share.recordName != zoneShareRecordName {
                throw ShareError(
                    .badRequest,
                    "a share without a root record is zone-wide and is named \(zoneShareRecordName), not \(share.recordName)",
                    subject: subject(share.recordName))
            }
        }
        return share
    }

    /// The user a proposed participant names, created from the email when the store does not know it yet.
    private func resolveUser(_ participant: Participant, subject: String) throws -> UserRow {
        var recordName = participant.userRecordName
        if recordName.isEmpty, participant.email == nil, let phone = participant.phone {
            // Invited by phone number: the user who has it (CloudKit looks it up; it creates nobody).
            guard let normalized = PhoneNumber.normalized(phone),
                let row = try SQLiteStore.userRow(.phone(normalized), db: db)
            else {
                throw ShareError(
                    .notFound, "no user has the phone number \(phone); invite them by email address", subject: subject)
            }
            return row
        }
        if recordName.isEmpty {
            guard let email = participant.email else {
                throw ShareError(
                    .badRequest, "a participant needs a user record name, an email address or a phone number",
                    subject: subject)
            }
            if let refusal = EmailAddress.check(email, subject: subject) { throw refusal }
            recordName = StableName.userRecordName(email: email)
        }
        if let row = try UserRow.fetchOne(db, recordName: recordName) { return row }
        if let email = participant.email, let refusal = EmailAddress.check(email, subject: subject) { throw refusal }
        guard let email = participant.email else {
            throw ShareError(
                .notFound, "no user \(recordName) in this store; name the participant by email address",
                subject: subject)
        }
        let row = UserRow(
            recordName: StableName.userRecordName(email: email), email: EmailAddress.normalized(email),
            name: participant.name)
        try row.insert(db, onConflict: .ignore)
        return row
    }

    /// The participant list a save results in: users resolved, newcomers pending, existing entries keeping
    /// their status; public users stay while the share is public.
    private func mergedParticipants(_ proposed: Share, existing: Share?, subject: String) throws -> [Participant] {
        var result: [Participant] = []
        var seen = Set<String>()
        for participant in proposed.participants {
            let user = try resolveUser(participant, subject: subject)
            if user.recordName == owner { continue }
            guard seen.insert(user.recordName).inserted else { continue }
            var entry = participant
            entry.userRecordName = user.recordName
            entry.participantID = user.recordName
            entry.email = user.email
            entry.name = user.name
            entry.phone = nil
            if let old = existing?.participant(user.recordName) {
                entry.acceptance = old.acceptance
                if old.role == .publicUser {
                    entry.role = .publicUser
                } else if old.acceptance == .removed, participant.acceptance != .removed {
                    // Listed again, not as removed, after leaving or being removed: invited again, as a
                    // CloudKit owner adds back someone who left. They accept again to see the share.
                    entry.acceptance = .pending
                }
            } else {
                if entry.role == .publicUser {
                    throw ShareError(
                        .badRequest, "public users join through the share's URL; they cannot be added",
                        subject: subject)
                }
                entry.acceptance = .pending
            }
            if entry.role == .owner { entry.role = .privateUser }
            result.append(entry)
        }
        if proposed.publicPermission != .none, let existing {
            // Public users stay while the share stays public, with its public permission whatever it was when
            // they joined (`Share.permission(of:)`).
            for old in existing.participants where old.role == .publicUser && !seen.contains(old.userRecordName) {
                result.append(old)
            }
        }
        if proposed.publicPermission == .none {
            result.removeAll { $0.role == .publicUser }
        }
        return result
    }

    private mutating func createShare(_ proposed: Share) throws -> RecordOutcome {
        let name = proposed.recordName
        let subject = subject(name)
        if let refusal = AccessRules.createShare(caller: caller, zoneOwner: owner, subject: subject) { throw refusal }
        try admitShare(subject: subject)
        if context.zoneShare != nil {
            throw ShareError(
                .badRequest,
                "the zone \(context.zone.name) is already shared as a whole; a record takes part in one share only",
                subject: subject)
        }
        var subtree: [String] = []
        if let root = proposed.rootRecordName {
            guard let rootRow = try row(root) else {
                throw ShareError(
                    .notFound, "the share's root record \(root) does not exist in this zone", subject: subject)
            }
            if let other = rootRow.shareRoot {
                throw ShareError(
                    .badRequest,
                    "\(root) already belongs to the hierarchy shared from \(other); a record takes part in one share only",
                    subject: subject)
            }
            subtree = try descendants(of: root)
            for descendant in subtree where try row(descendant)?.shareRoot != nil {
                throw ShareError(
                    .badRequest,
                    "\(descendant), under \(root), is already shared; a record takes part in one share only",
                    subject: subject)
            }
        } else if !context.sharesByRoot.isEmpty {
            throw ShareError(
                .badRequest,
                "the zone \(context.zone.name) has shared hierarchies; stop sharing them before sharing the whole zone",
                subject: subject)
        }
        var share = proposed
        share.participants = try mergedParticipants(proposed, existing: nil, subject: subject)
        if let refusal = AccessRules.validateParticipants(of: share, subject: subject) { throw refusal }
        let shortGUID = try shortGUID(proposed: proposed.shortGUID, subject: subject)
        let stamp = Stamp(timestamp: now, userRecordName: caller)
        let row = ShareRow(
            zoneId: zoneId, name: name, root: share.rootRecordName, title: share.title,
            publicPermission: share.publicPermission, seq: nextSeq(), shortGUID: shortGUID, created: stamp,
            modified: stamp)
        try row.insert(in: db)
        try writeParticipants(share.participants, shareName: name)
        if let root = share.rootRecordName {
            try setShareRoot(root, to: root, isRoot: true)
            for name in subtree { try setShareRoot(name, to: root) }
        }
        try context.loadShares(db)
        return try savedShare(name)
    }

    /// A new share's short GUID: random, unless the owner proposes one (a recipe's `stable_url: true`).
    private func shortGUID(proposed: String?, subject: String) throws -> String {
        guard let proposed, !proposed.isEmpty else { return ShortGUID.random() }
        guard ShortGUID.isWellFormed(proposed) else {
            throw ShareError(
                .badRequest, "the proposed short GUID '\(proposed)' is not 16 to 64 letters and digits",
                subject: subject)
        }
        if try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM share WHERE shortGUID = ?)"), arguments: [proposed])
            == true
        {
            throw ShareError(
                .exists, "another share already has the short GUID \(proposed); propose another or none",
                subject: subject)
        }
        return proposed
    }

    private func savedShare(_ name: String) throws -> RecordOutcome {
        guard let share = context.sharesByName[name] else {
            throw ShareError(.internalError, "the share \(name) vanished while being saved")
        }
        return .savedShare(share)
    }

    private func writeParticipants(_ participants: [Participant], shareName: String) throws {
        try db.cachedStatement(sql: "DELETE FROM participant WHERE zoneId = ? AND shareName = ?")
            .execute(arguments: [zoneId, shareName])
        // One cached statement for every row: GRDB's record insert prepares its statement anew each time.
        let insert = try db.cachedStatement(
            sql: """
                INSERT INTO participant (zoneId, shareName, user, role, permission, acceptance, position)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
        for (position, p) in participants.enumerated() {
            try insert.execute(arguments: [
                zoneId, shareName, p.userRecordName, p.role, p.permission, p.acceptance, position,
            ])
        }
    }

    private mutating func updateShare(_ existing: Share, proposed: Share) throws -> RecordOutcome {
        let name = existing.recordName
        let subject = subject(name)
        if let root = proposed.rootRecordName, root != existing.rootRecordName {
            throw ShareError(.badRequest, "a share's root record cannot change", subject: subject)
        }
        var share = existing
        share.title = proposed.title
        share.publicPermission = proposed.publicPermission
        share.participants = try mergedParticipants(proposed, existing: existing, subject: subject)
        if let refusal = AccessRules.updateShare(
            caller: caller, zoneOwner: owner, existing: existing, proposed: share, subject: subject)
        {
            throw refusal
        }
        if let refusal = AccessRules.validateParticipants(of: share, subject: subject) { throw refusal }
        try db.execute(
            sql: """
                UPDATE share SET title = ?, publicPermission = ?, seq = ?, modifiedAt = ?, modifiedBy = ?
                WHERE zoneId = ? AND name = ?
                """,
            arguments: [share.title, share.publicPermission, nextSeq(), now, caller, zoneId, name])
        try writeParticipants(share.participants, shareName: name)
        let kept = Set(share.participants.map(\.userRecordName))
        for gone in existing.participants where !kept.contains(gone.userRecordName) && gone.acceptance == .accepted {
            try noteSharedRemoval(user: gone.userRecordName)
        }
        try context.loadShares(db)
        return try savedShare(name)
    }

    /// Deletes a share: its participants lose access, its hierarchy's records leave it.
    mutating func removeShare(_ share: Share) throws {
        try db.execute(sql: "DELETE FROM share WHERE zoneId = ? AND name = ?", arguments: [zoneId, share.recordName])
        try writeTombstone(share.recordName, shareRoot: share.rootRecordName)
        for p in share.participants where p.acceptance == .accepted { try noteSharedRemoval(user: p.userRecordName) }
        if let root = share.rootRecordName {
            let members = try String.fetchAll(
                db, sql: "SELECT name FROM record WHERE zoneId = ? AND shareRoot = ?", arguments: [zoneId, root])
            for member in members { try setShareRoot(member, to: nil, isRoot: member == root) }
        }
        try context.loadShares(db)
    }

    /// Notes that a zone may have left `user`'s shared database, for database changes.
    private mutating func noteSharedRemoval(user: String) throws {
        try ZoneRemovalRow(scope: .shared, user: user, owner: owner, zoneName: context.zone.name, seq: nextSeq())
            .insert(db, onConflict: .replace)
    }
}
