import Foundation
import GRDB
import ShareKit

/// One `modifyRecords` call: its operations applied in order inside the caller's transaction.
///
/// Rows the batch touches are fetched once, in one query, and kept in `cache` as the batch writes; the
/// hierarchy a record belongs to is its `shareRoot` column, so access checks need no walk up parent chains.
struct RecordBatch {
    var context: ZoneContext
    let db: Database
    var seq: Int64
    let now: Int64
    /// Rows by record name: `.some(nil)` is a row known not to exist.
    private var cache: [String: RecordRow?] = [:]
    private(set) var wrote = false

    init(context: ZoneContext, db: Database, now: Int64) throws {
        self.context = context
        self.db = db
        self.now = now
        self.seq = try SeqCounter.current(db)
    }

    var zoneId: Int64 { context.zoneId }
    var caller: UserRecordName { context.caller }
    var owner: UserRecordName { context.owner }

    private mutating func nextSeq() -> Int64 {
        seq += 1
        wrote = true
        return seq
    }

    // MARK: - Rows

    /// Fetches the rows of these names (and the parents the operations name) in one query.
    mutating func prefetch(_ operations: [RecordOperation]) throws {
        var names = Set<String>()
        for op in operations {
            names.insert(op.recordName)
            if case .record(let r) = op.item, let parent = r.parent { names.insert(parent) }
            if case .share(let s) = op.item, let root = s.rootRecordName { names.insert(root) }
        }
        try fetch(Array(names))
    }

    private mutating func fetch(_ names: [String]) throws {
        let missing = names.filter { cache[$0] == nil }
        guard !missing.isEmpty, zoneId >= 0 else {
            for name in missing { cache[name] = .some(nil) }
            return
        }
        for chunk in stride(from: 0, to: missing.count, by: 500).map({
            Array(missing[$0..<min($0 + 500, missing.count)])
        }) {
            for name in chunk { cache[name] = .some(nil) }
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            var arguments: StatementArguments = [zoneId]
            arguments += StatementArguments(chunk)
            let rows = try RecordRow.fetchAll(
                db, sql: "SELECT \(RecordRow.selection) FROM record WHERE zoneId = ? AND name IN (\(placeholders))",
                arguments: arguments)
            for row in rows { cache[row.name] = row }
        }
    }

    mutating func row(_ name: String) throws -> RecordRow? {
        if let cached = cache[name] { return cached }
        try fetch([name])
        return cache[name] ?? nil
    }

    // MARK: - Operations

    mutating func apply(_ op: RecordOperation) throws -> RecordOutcome {
        let outcome: Result<RecordOutcome, ShareError>
        switch op.item {
        case .record(let record): outcome = try applyRecord(op.kind, record)
        case .share(let share):
            // A share save may create users before a later check refuses it: undo that on failure.
            var result: Result<RecordOutcome, ShareError> = .failure(ShareError(.internalError, "not run"))
            try db.inSavepoint {
                result = try applyShare(op.kind, share)
                if case .failure = result { return .rollback }
                return .commit
            }
            if case .failure = result {
                try context.loadShares(db)
                cache.removeAll()
            }
            outcome = result
        }
        switch outcome {
        case .success(let o): return o
        case .failure(let e): return .failed(recordName: op.recordName, e)
        }
    }

    private func subject(_ name: String) -> String { "\(context.visibleZoneID.zoneName)/\(name)" }

    private mutating func applyRecord(_ kind: OperationKind, _ record: Record) throws -> Result<
        RecordOutcome, ShareError
    > {
        let name = record.recordName
        let subject = subject(name)
        guard !name.isEmpty else { return .failure(ShareError(.badRequest, "a record needs a record name")) }
        if name == zoneShareRecordName || context.sharesByName[name] != nil || record.recordType == shareRecordType {
            return .failure(
                ShareError(
                    .badRequest, "\(name) is a share: save it as a share operation, not as a record", subject: subject))
        }
        let existing = try row(name)
        if let existing, !context.canRead(shareRoot: existing.shareRoot), kind != .create {
            return .failure(
                AccessRules.read(
                    caller: caller, zoneOwner: owner, share: context.coveringShare(shareRoot: existing.shareRoot),
                    subject: subject) ?? ShareError(.accessDenied, "not allowed", subject: subject))
        }
        switch kind {
        case .create:
            if existing != nil {
                return .failure(
                    ShareError(.exists, "a record named \(name) already exists in this zone", subject: subject))
            }
            return try create(record)
        case .update, .replace, .forceUpdate, .forceReplace:
            guard let existing else {
                if kind == .forceUpdate || kind == .forceReplace { return try create(record) }
                return .failure(ShareError(.notFound, "no record named \(name) in this zone", subject: subject))
            }
            if kind.checksChangeTag,
                let error = checkTag(record.changeTag, current: existing.changeTag, subject: subject)
            {
                return .failure(error)
            }
            return try update(existing, with: record, replacing: kind == .replace || kind == .forceReplace)
        case .delete, .forceDelete:
            guard let existing else {
                return .failure(ShareError(.notFound, "no record named \(name) in this zone", subject: subject))
            }
            if kind.checksChangeTag,
                let error = checkTag(record.changeTag, current: existing.changeTag, subject: subject)
            {
                return .failure(error)
            }
            return try delete(existing)
        }
    }

    private func checkTag(_ given: String?, current: String, subject: String) -> ShareError? {
        guard let given else {
            return ShareError(
                .conflict, "no change tag given; fetch the record and send its recordChangeTag, or force the write",
                subject: subject)
        }
        if given == current { return nil }
        return ShareError(
            .conflict,
            "the record changed since it was read (change tag \(given), now \(current)); fetch it again and retry",
            subject: subject)
    }

    private func validateReferences(_ fields: [String: FieldValue], selfName: String, subject: String) throws
        -> ShareError?
    {
        let targets = FieldCoding.validatedTargets(fields, zoneName: context.zone.name)
        guard !targets.isEmpty else { return nil }
        var batch = self
        for target in targets where target != selfName {
            if try batch.row(target) == nil {
                return ShareError(
                    .validatingReferenceError, "the VALIDATE reference points to \(target), which does not exist",
                    subject: subject)
            }
        }
        return nil
    }

    private mutating func create(_ record: Record) throws -> Result<RecordOutcome, ShareError> {
        let name = record.recordName
        let subject = subject(name)
        guard !record.recordType.isEmpty else {
            return .failure(ShareError(.badRequest, "a new record needs a record type", subject: subject))
        }
        var parentRow: RecordRow?
        if let parent = record.parent {
            if parent == name {
                return .failure(ShareError(.badRequest, "a record cannot be its own parent", subject: subject))
            }
            guard let found = try row(parent) else {
                return .failure(
                    ShareError(
                        .validatingReferenceError, "the parent \(parent) does not exist in this zone", subject: subject)
                )
            }
            parentRow = found
        }
        switch context.scope {
        case .private: break
        case .public: break
        case .shared:
            let share = context.zoneShare ?? parentRow?.shareRoot.flatMap { context.sharesByRoot[$0] }
            if let error = AccessRules.create(caller: caller, zoneOwner: owner, share: share, subject: subject) {
                return .failure(error)
            }
        }
        if let error = try validateReferences(record.fields, selfName: name, subject: subject) {
            return .failure(error)
        }
        if let error = CloudKitLimits.checkRecord(record.fields, subject: subject) { return .failure(error) }
        let s = nextSeq()
        let row = RecordRow(
            zoneId: zoneId, name: name, type: record.recordType, fields: FieldCoding.encode(record.fields),
            parent: record.parent, shareRoot: parentRow?.shareRoot, seq: s, createdAt: now, createdBy: caller,
            modifiedAt: now, modifiedBy: caller)
        let statement = try db.cachedStatement(
            sql: "INSERT INTO record (\(RecordRow.selection)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)")
        try statement.execute(arguments: [
            row.zoneId, row.name, row.type, row.fields, row.parent, row.shareRoot, row.seq, row.createdAt,
            row.createdBy,
            row.modifiedAt, row.modifiedBy, nil,
        ])
        try writeReferences(name, fields: record.fields, replacing: false)
        cache[name] = row
        return .success(
            .saved(
                Record(
                    recordName: name, recordType: record.recordType, zoneID: context.visibleZoneID,
                    fields: record.fields,
                    parent: record.parent, changeTag: row.changeTag,
                    created: Stamp(timestamp: now, userRecordName: caller),
                    modified: Stamp(timestamp: now, userRecordName: caller))))
    }

    private mutating func writeReferences(_ name: String, fields: [String: FieldValue], replacing: Bool) throws {
        if replacing {
            try db.cachedStatement(sql: "DELETE FROM reference WHERE zoneId = ? AND source = ?")
                .execute(arguments: [zoneId, name])
        }
        let targets = FieldCoding.deleteSelfTargets(fields, zoneName: context.zone.name)
        for target in Set(targets) {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO reference (zoneId, source, target) VALUES (?,?,?)")
                .execute(arguments: [zoneId, name, target])
        }
    }

    private mutating func update(_ existing: RecordRow, with record: Record, replacing: Bool)
        throws -> Result<RecordOutcome, ShareError>
    {
        let name = existing.name
        let subject = subject(name)
        let share = context.coveringShare(shareRoot: existing.shareRoot)
        switch context.scope {
        case .private: break
        case .public:
            if let error = AccessRules.writePublicRecord(
                caller: caller, creator: existing.createdBy, verb: "changes", subject: subject)
            {
                return .failure(error)
            }
        case .shared:
            if let error = AccessRules.update(caller: caller, zoneOwner: owner, share: share, subject: subject) {
                return .failure(error)
            }
        }
        if !record.recordType.isEmpty, record.recordType != existing.type {
            return .failure(
                ShareError(
                    .badRequest, "a record's type cannot change (it is \(existing.type), not \(record.recordType))",
                    subject: subject))
        }
        let oldFields = try FieldCoding.decode(existing.fields)
        var fields = record.fields
        if !replacing { fields = oldFields.merging(record.fields) { _, new in new } }
        if let error = try validateReferences(fields, selfName: name, subject: subject) { return .failure(error) }
        if let error = CloudKitLimits.checkRecord(fields, subject: subject) { return .failure(error) }

        // An update that names no parent keeps the record where it is; a replace sets it.
        let newParent = replacing ? record.parent : (record.parent ?? existing.parent)
        var newShareRoot = existing.shareRoot
        var movedSubtree: [String] = []
        if newParent != existing.parent {
            var parentRow: RecordRow?
            if let newParent {
                guard let found = try row(newParent) else {
                    return .failure(
                        ShareError(
                            .validatingReferenceError, "the parent \(newParent) does not exist in this zone",
                            subject: subject))
                }
                parentRow = found
                if try ancestors(of: newParent).contains(name) {
                    return .failure(
                        ShareError(
                            .badRequest, "making \(newParent) the parent of \(name) would make a parent cycle",
                            subject: subject))
                }
            }
            let isRoot = context.sharesByRoot[name] != nil
            newShareRoot = isRoot ? name : parentRow?.shareRoot
            if newShareRoot != existing.shareRoot {
                if context.scope == .shared {
                    let destination = newShareRoot.flatMap { context.sharesByRoot[$0] }
                    if let error = AccessRules.create(
                        caller: caller, zoneOwner: owner, share: destination, subject: subject)
                    {
                        return .failure(error)
                    }
                }
                movedSubtree = try descendants(of: name)
                if newShareRoot != nil {
                    var nested: [String] = []
                    for descendant in movedSubtree where try self.row(descendant)?.shareRoot != existing.shareRoot {
                        nested.append(descendant)
                    }
                    if let other = nested.first {
                        return .failure(
                            ShareError(
                                .badRequest,
                                "\(other), under \(name), is shared on its own; a record takes part in one share only",
                                subject: subject))
                    }
                }
            }
        }
        let s = nextSeq()
        var row = existing
        row.fields = FieldCoding.encode(fields)
        row.parent = newParent
        row.shareRoot = newShareRoot
        row.seq = s
        row.modifiedAt = now
        row.modifiedBy = caller
        row.tagSeq = nil
        try db.cachedStatement(
            sql: """
                UPDATE record SET fields = ?, parent = ?, shareRoot = ?, seq = ?, modifiedAt = ?, modifiedBy = ?,
                  tagSeq = NULL
                WHERE zoneId = ? AND name = ?
                """
        ).execute(arguments: [
            row.fields, row.parent, row.shareRoot, row.seq, row.modifiedAt, row.modifiedBy, zoneId, name,
        ])
        let hadReferences = !FieldCoding.deleteSelfTargets(oldFields, zoneName: context.zone.name).isEmpty
        if hadReferences || !FieldCoding.deleteSelfTargets(fields, zoneName: context.zone.name).isEmpty {
            try writeReferences(name, fields: fields, replacing: true)
        }
        cache[name] = row
        for descendant in movedSubtree { try setShareRoot(descendant, to: newShareRoot) }
        return .success(
            .saved(try row.record(in: context.visibleZoneID, shareRecordName: context.sharesByRoot[name]?.recordName)))
    }

    /// Moves one record into (or out of) a hierarchy: a new place in the change feed, so participants hear
    /// of it. Only the hierarchy's root is rewritten (its share changes), so only its change tag changes;
    /// the others keep theirs, as nothing of theirs was written.
    private mutating func setShareRoot(_ name: String, to root: String?, isRoot: Bool = false) throws {
        let s = nextSeq()
        guard var row = try row(name) else { return }
        if !isRoot, row.tagSeq == nil { row.tagSeq = row.seq }
        if isRoot { row.tagSeq = nil }
        row.shareRoot = root
        row.seq = s
        try db.cachedStatement(
            sql: "UPDATE record SET shareRoot = ?, seq = ?, tagSeq = ? WHERE zoneId = ? AND name = ?"
        ).execute(arguments: [root, s, row.tagSeq, zoneId, name])
        cache[name] = row
    }

    /// The record names above `name` (itself included), following parents; stops at a cycle.
    private func ancestors(of name: String) throws -> Set<String> {
        let names = try String.fetchAll(
            db,
            sql: """
                WITH RECURSIVE up(name, parent) AS (
                    SELECT name, parent FROM record WHERE zoneId = ?1 AND name = ?2
                    UNION
                    SELECT r.name, r.parent FROM record r JOIN up ON r.zoneId = ?1 AND r.name = up.parent)
                SELECT name FROM up
                """, arguments: [zoneId, name])
        return Set(names)
    }

    /// The records below `name`, following parents.
    private func descendants(of name: String) throws -> [String] {
        try String.fetchAll(
            db,
            sql: """
                WITH RECURSIVE down(name) AS (
                    SELECT name FROM record WHERE zoneId = ?1 AND parent = ?2
                    UNION
                    SELECT r.name FROM record r JOIN down ON r.zoneId = ?1 AND r.parent = down.name)
                SELECT name FROM down WHERE name != ?2
                """, arguments: [zoneId, name])
    }

    private mutating func delete(_ existing: RecordRow) throws -> Result<RecordOutcome, ShareError> {
        let name = existing.name
        let subject = subject(name)
        let share = context.coveringShare(shareRoot: existing.shareRoot)
        let isRoot = context.sharesByRoot[name] != nil
        switch context.scope {
        case .private: break
        case .public:
            if let error = AccessRules.writePublicRecord(
                caller: caller, creator: existing.createdBy, verb: "deletes", subject: subject)
            {
                return .failure(error)
            }
        case .shared:
            if let error = AccessRules.delete(
                caller: caller, zoneOwner: owner, share: share, isRoot: isRoot, subject: subject)
            {
                return .failure(error)
            }
        }
        // DELETE_SELF references cascade, breadth first.
        var queue = [name]
        var deleted = Set<String>()
        while let next = queue.first {
            queue.removeFirst()
            guard !deleted.contains(next), let row = try row(next) else { continue }
            deleted.insert(next)
            try removeRow(row)
            let referrers = try String.fetchAll(
                db, sql: "SELECT source FROM reference WHERE zoneId = ? AND target = ?", arguments: [zoneId, next])
            queue.append(contentsOf: referrers)
        }
        return .success(.deleted(recordName: name))
    }

    private mutating func removeRow(_ row: RecordRow) throws {
        let s = nextSeq()
        try db.cachedStatement(sql: "DELETE FROM record WHERE zoneId = ? AND name = ?").execute(arguments: [
            zoneId, row.name,
        ])
        try db.cachedStatement(sql: "DELETE FROM reference WHERE zoneId = ? AND source = ?")
            .execute(arguments: [zoneId, row.name])
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO tombstone (zoneId, name, seq, shareRoot) VALUES (?,?,?,?)")
            .execute(arguments: [zoneId, row.name, s, row.shareRoot])
        cache[row.name] = .some(nil)
        if let share = context.sharesByRoot[row.name] {
            // Deleting the root of a hierarchy ends its share.
            try removeShare(share)
        }
    }

    // MARK: - Shares

    private mutating func applyShare(_ kind: OperationKind, _ proposed: Share) throws -> Result<
        RecordOutcome, ShareError
    > {
        guard context.scope != .public else {
            return .failure(
                ShareError(.badRequest, "the public database holds no shares", subject: proposed.recordName))
        }
        guard context.zone.name != defaultZoneName else {
            return .failure(
                ShareError(
                    .badRequest, "shares live in custom zones, not in \(defaultZoneName); create a zone and share it",
                    subject: subject(proposed.recordName)))
        }
        var share = proposed
        // A share named by record name only (as Web Services names it in a deletion) is the share of that name.
        if share.rootRecordName == nil, let known = context.sharesByName[share.recordName] {
            share.rootRecordName = known.rootRecordName
        }
        if let root = share.rootRecordName {
            if share.recordName == zoneShareRecordName {
                return .failure(
                    ShareError(
                        .badRequest, "\(zoneShareRecordName) names a zone-wide share, which has no root record",
                        subject: subject(root)))
            }
            if share.recordName.isEmpty {
                share.recordName =
                    context.sharesByRoot[root]?.recordName
                    ?? StableName.hierarchyShareRecordName(zoneName: context.zone.name, rootRecordName: root)
            }
        } else {
            if share.recordName.isEmpty { share.recordName = zoneShareRecordName }
            if share.recordName != zoneShareRecordName {
                return .failure(
                    ShareError(
                        .badRequest,
                        "a share without a root record is zone-wide and is named \(zoneShareRecordName), not \(share.recordName)",
                        subject: subject(share.recordName)))
            }
        }
        let name = share.recordName
        let subject = subject(name)
        let existing = context.sharesByName[name]
        if let existing, kind != .create, context.scope == .shared,
            let error = AccessRules.read(caller: caller, zoneOwner: owner, share: existing, subject: subject)
        {
            return .failure(error)
        }
        switch kind {
        case .create:
            if existing != nil || (share.rootRecordName.flatMap { context.sharesByRoot[$0] } != nil) {
                return .failure(ShareError(.exists, "this share already exists", subject: subject))
            }
            return try createShare(share)
        case .update, .replace, .forceUpdate, .forceReplace:
            guard let existing else {
                if kind == .forceUpdate || kind == .forceReplace { return try createShare(share) }
                return .failure(ShareError(.notFound, "no share named \(name) in this zone", subject: subject))
            }
            if kind.checksChangeTag, let current = existing.changeTag,
                let error = checkTag(share.changeTag, current: current, subject: subject)
            {
                return .failure(error)
            }
            return try updateShare(existing, proposed: share)
        case .delete, .forceDelete:
            guard let existing else {
                return .failure(ShareError(.notFound, "no share named \(name) in this zone", subject: subject))
            }
            if kind.checksChangeTag, let current = existing.changeTag,
                let error = checkTag(share.changeTag, current: current, subject: subject)
            {
                return .failure(error)
            }
            if let error = AccessRules.deleteShare(caller: caller, zoneOwner: owner, share: existing, subject: subject)
            {
                return .failure(error)
            }
            try removeShare(existing)
            return .success(.deleted(recordName: name))
        }
    }

    /// The user a proposed participant names, created from the email when the store does not know it yet.
    private func resolveUser(_ participant: Participant, subject: String) throws -> Result<UserRow, ShareError> {
        var recordName = participant.userRecordName
        if recordName.isEmpty {
            guard let email = participant.email, email.contains("@") else {
                return .failure(
                    ShareError(
                        .badRequest, "a participant needs a user record name or an email address", subject: subject))
            }
            recordName = StableName.userRecordName(email: email)
        }
        if let row = try UserRow.fetchOne(db, key: recordName) { return .success(row) }
        if let email = participant.email, let error = CloudKitLimits.checkEmail(email) { return .failure(error) }
        guard let email = participant.email, email.contains("@") else {
            return .failure(
                ShareError(
                    .notFound, "no user \(recordName) in this store; name the participant by email address",
                    subject: subject))
        }
        let row = UserRow(
            recordName: StableName.userRecordName(email: email), email: StableName.normalizedEmail(email),
            name: participant.name)
        try row.insert(db, onConflict: .ignore)
        return .success(row)
    }

    /// The participant list a save results in: users resolved, newcomers pending, existing entries keeping
    /// their status; public users stay while the share is public.
    private func mergedParticipants(_ proposed: Share, existing: Share?, subject: String) throws
        -> Result<[Participant], ShareError>
    {
        var result: [Participant] = []
        var seen = Set<String>()
        for participant in proposed.participants {
            let user: UserRow
            switch try resolveUser(participant, subject: subject) {
            case .success(let u): user = u
            case .failure(let e): return .failure(e)
            }
            if user.recordName == owner { continue }
            guard seen.insert(user.recordName).inserted else { continue }
            var entry = participant
            entry.userRecordName = user.recordName
            entry.participantID = user.recordName
            entry.email = user.email
            entry.name = user.name
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
                    return .failure(
                        ShareError(
                            .badRequest, "public users join through the share's URL; they cannot be added",
                            subject: subject))
                }
                entry.acceptance = .pending
            }
            if entry.role == .owner { entry.role = .privateUser }
            result.append(entry)
        }
        if proposed.publicPermission != .none, let existing {
            for old in existing.participants where old.role == .publicUser && !seen.contains(old.userRecordName) {
                result.append(old)
            }
        }
        if proposed.publicPermission == .none {
            result.removeAll { $0.role == .publicUser }
        }
        return .success(result)
    }

    private mutating func createShare(_ proposed: Share) throws -> Result<RecordOutcome, ShareError> {
        let name = proposed.recordName
        let subject = subject(name)
        if let error = AccessRules.createShare(caller: caller, zoneOwner: owner, subject: subject) {
            return .failure(error)
        }
        if context.zoneShare != nil {
            return .failure(
                ShareError(
                    .badRequest,
                    "the zone \(context.zone.name) is already shared as a whole; a record takes part in one share only",
                    subject: subject))
        }
        var subtree: [String] = []
        if let root = proposed.rootRecordName {
            guard let rootRow = try row(root) else {
                return .failure(
                    ShareError(
                        .notFound, "the share's root record \(root) does not exist in this zone", subject: subject))
            }
            if let other = rootRow.shareRoot {
                return .failure(
                    ShareError(
                        .badRequest,
                        "\(root) already belongs to the hierarchy shared from \(other); a record takes part in one share only",
                        subject: subject))
            }
            subtree = try descendants(of: root)
            var nested: [String] = []
            for descendant in subtree where try self.row(descendant)?.shareRoot != nil { nested.append(descendant) }
            if let other = nested.first {
                return .failure(
                    ShareError(
                        .badRequest,
                        "\(other), under \(root), is already shared; a record takes part in one share only",
                        subject: subject))
            }
        } else if !context.sharesByRoot.isEmpty {
            return .failure(
                ShareError(
                    .badRequest,
                    "the zone \(context.zone.name) has shared hierarchies; stop sharing them before sharing the whole zone",
                    subject: subject))
        }
        var share = proposed
        switch try mergedParticipants(proposed, existing: nil, subject: subject) {
        case .success(let p): share.participants = p
        case .failure(let e): return .failure(e)
        }
        if let error = AccessRules.validateParticipants(of: share, subject: subject) { return .failure(error) }
        // A random short GUID, unless the owner proposes one (a recipe's `stable_url: true`).
        var shortGUID = ShortGUID.random()
        if let proposedGUID = proposed.shortGUID, !proposedGUID.isEmpty {
            guard ShortGUID.isWellFormed(proposedGUID) else {
                return .failure(
                    ShareError(
                        .badRequest, "the proposed short GUID '\(proposedGUID)' is not 16 to 64 lowercase letters and digits",
                        subject: subject))
            }
            if try ShareRow.filter(ShareRow.Columns.shortGUID == proposedGUID).fetchCount(db) > 0 {
                return .failure(
                    ShareError(
                        .exists, "another share already has the short GUID \(proposedGUID); propose another or none",
                        subject: subject))
            }
            shortGUID = proposedGUID
        }
        let s = nextSeq()
        let row = ShareRow(
            zoneId: zoneId, name: name, root: share.rootRecordName, title: share.title,
            publicPermission: share.publicPermission, seq: s, shortGUID: shortGUID)
        try row.insert(db)
        try writeParticipants(share.participants, shareName: name)
        if let root = share.rootRecordName {
            try setShareRoot(root, to: root, isRoot: true)
            for name in subtree { try setShareRoot(name, to: root) }
        }
        try context.loadShares(db)
        return .success(try savedShare(name))
    }

    private func savedShare(_ name: String) throws -> RecordOutcome {
        guard let share = context.sharesByName[name] else {
            throw ShareError(.internalError, "the share \(name) vanished while being saved")
        }
        return .savedShare(share)
    }

    private func writeParticipants(_ participants: [Participant], shareName: String) throws {
        try db.execute(
            sql: "DELETE FROM participant WHERE zoneId = ? AND shareName = ?", arguments: [zoneId, shareName])
        for (position, p) in participants.enumerated() {
            try ParticipantRow(
                zoneId: zoneId, shareName: shareName, user: p.userRecordName, role: p.role,
                permission: p.permission, acceptance: p.acceptance, position: position
            ).insert(db)
        }
    }

    private mutating func updateShare(_ existing: Share, proposed: Share) throws -> Result<RecordOutcome, ShareError> {
        let name = existing.recordName
        let subject = subject(name)
        if let root = proposed.rootRecordName, root != existing.rootRecordName {
            return .failure(ShareError(.badRequest, "a share's root record cannot change", subject: subject))
        }
        var share = existing
        share.title = proposed.title
        share.publicPermission = proposed.publicPermission
        switch try mergedParticipants(proposed, existing: existing, subject: subject) {
        case .success(let p): share.participants = p
        case .failure(let e): return .failure(e)
        }
        if let error = AccessRules.updateShare(
            caller: caller, zoneOwner: owner, existing: existing, proposed: share, subject: subject)
        {
            return .failure(error)
        }
        if let error = AccessRules.validateParticipants(of: share, subject: subject) { return .failure(error) }
        let s = nextSeq()
        try db.execute(
            sql: "UPDATE share SET title = ?, publicPermission = ?, seq = ? WHERE zoneId = ? AND name = ?",
            arguments: [share.title, share.publicPermission, s, zoneId, name])
        try writeParticipants(share.participants, shareName: name)
        let kept = Set(share.participants.map(\.userRecordName))
        for gone in existing.participants where !kept.contains(gone.userRecordName) && gone.acceptance == .accepted {
            try noteSharedRemoval(user: gone.userRecordName)
        }
        try context.loadShares(db)
        return .success(try savedShare(name))
    }

    /// Deletes a share: its participants lose access, its hierarchy's records leave it.
    private mutating func removeShare(_ share: Share) throws {
        let s = nextSeq()
        try db.execute(sql: "DELETE FROM share WHERE zoneId = ? AND name = ?", arguments: [zoneId, share.recordName])
        try db.execute(
            sql: "INSERT OR REPLACE INTO tombstone (zoneId, name, seq, shareRoot) VALUES (?,?,?,?)",
            arguments: [zoneId, share.recordName, s, share.rootRecordName])
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

    /// Stores the sequence number and marks the zone changed; call once at the end of the call.
    mutating func finish() throws {
        guard wrote else { return }
        try SeqCounter.store(seq, db)
        try db.execute(sql: "UPDATE zone SET seq = ? WHERE id = ?", arguments: [seq, zoneId])
    }
}
