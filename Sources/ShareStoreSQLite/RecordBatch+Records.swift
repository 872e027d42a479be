import Foundation
import GRDB
import ShareKit

// MARK: - Records

extension RecordBatch {
    /// Saves or deletes one record.
    /// - Throws: `ShareError` for an operation the rules refuse, before anything is written.
    /// - Parameter encodedFields: the record's fields encoded, when the caller did so (`encodedForCreate`).
    mutating func applyRecord(_ kind: OperationKind, _ record: Record, encodedFields: Data? = nil) throws
        -> RecordOutcome
    {
        let name = record.recordName
        let subject = subject(name)
        guard !name.isEmpty else { throw ShareError(.badRequest, "a record needs a record name") }
        if name == zoneShareRecordName || context.sharesByName[name] != nil || record.recordType == shareRecordType {
            throw ShareError(
                .badRequest, "\(name) is a share: save it as a share operation, not as a record", subject: subject)
        }
        let found = try row(name)
        // A record the caller may not read is, to the caller, one that does not exist: an update or a delete
        // answers as for a missing record, and a create (or a forced save) meets the rules a new record meets,
        // so that no refusal tells what exists. Only a create the rules allow learns that the name is taken.
        let hidden = found.map { !context.canRead(shareRoot: $0.shareRoot) } ?? false
        let existing = hidden ? nil : found
        switch kind {
        case .create:
            if existing != nil {
                throw ShareError(.exists, "a record named \(name) already exists in this zone", subject: subject)
            }
            return try create(record, subject: subject, encodedFields: encodedFields, nameTaken: hidden)
        case .update, .replace, .forceUpdate, .forceReplace:
            guard let existing else {
                if kind == .forceUpdate || kind == .forceReplace {
                    return try create(record, subject: subject, encodedFields: encodedFields, nameTaken: hidden)
                }
                throw context.unknownRecord(name, subject: subject, hidden: hidden)
            }
            try checkMayWrite(existing, deleting: false, subject: subject)
            if kind.checksChangeTag {
                try checkRecordTag(record.changeTag, current: existing.changeTag, name: name, subject: subject)
            }
            return try update(
                existing, with: record, replacing: kind == .replace || kind == .forceReplace, subject: subject)
        case .delete, .forceDelete:
            guard let existing else { throw context.unknownRecord(name, subject: subject, hidden: hidden) }
            try checkMayWrite(existing, deleting: true, subject: subject)
            if kind.checksChangeTag {
                try checkRecordTag(record.changeTag, current: existing.changeTag, name: name, subject: subject)
            }
            return try delete(existing, subject: subject)
        }
    }

    /// Refuses a change or deletion of `existing` that the access rules do not allow. Asked before the change
    /// tag is compared (`AccessRules`: permission before the change tag), so a caller who may not write the
    /// record is refused as such whatever tag it sent, and never told the record's current tag.
    private func checkMayWrite(_ existing: RecordRow, deleting: Bool, subject: String) throws(ShareError) {
        let refusal: ShareError?
        switch context.scope {
        case .private:
            refusal = nil
        case .public:
            refusal = AccessRules.writePublicRecord(
                caller: caller, creator: existing.createdBy, verb: deleting ? "deletes" : "changes", subject: subject)
        case .shared:
            let share = context.coveringShare(shareRoot: existing.shareRoot)
            refusal =
                deleting
                ? AccessRules.delete(
                    caller: caller, zoneOwner: owner, share: share, isRoot: context.sharesByRoot[existing.name] != nil,
                    subject: subject)
                : AccessRules.update(caller: caller, zoneOwner: owner, share: share, subject: subject)
        }
        if let refusal { throw refusal }
    }

    /// Refuses fields whose `VALIDATE` references point to records that do not exist.
    /// - Parameter kept: the fields keep references written before: their targets must exist, whoever may read
    ///   them. A reference the save writes must point to a record the caller may read (to the caller, one it may
    ///   not read does not exist: `applyRecord`).
    private mutating func validateReferences(
        _ fields: [String: FieldValue], selfName: String, subject: String, kept: Bool = false
    ) throws {
        for target in FieldCoding.validatedTargets(fields, zoneName: context.zone.name) where target != selfName {
            if try (kept ? row(target) : readableRow(target)) == nil {
                throw ShareError(
                    .validatingReferenceError, "the VALIDATE reference points to \(target), which does not exist",
                    subject: subject)
            }
        }
    }

    /// The row of a record's new parent.
    /// - Throws: `VALIDATING_REFERENCE_ERROR` when the parent does not exist.
    private mutating func parentRow(_ parent: String, subject: String) throws -> RecordRow {
        guard let found = try readableRow(parent) else {
            throw ShareError(
                .validatingReferenceError, "the parent \(parent) does not exist in this zone", subject: subject)
        }
        return found
    }

    /// The row of a record the caller may read; nil for one that does not exist or that it may not read (to
    /// the caller, the same: `applyRecord`).
    private mutating func readableRow(_ name: String) throws -> RecordRow? {
        guard let found = try row(name), context.canRead(shareRoot: found.shareRoot) else { return nil }
        return found
    }

    /// - Parameter subject: how a refusal names the record (`subject(_:)`), spelled once an operation.
    /// - Parameter nameTaken: a record the caller may not read has the name: the rules a new record meets
    ///   decide first, then the name answers `EXISTS`.
    private mutating func create(_ record: Record, subject: String, encodedFields: Data?, nameTaken: Bool = false)
        throws -> RecordOutcome
    {
        let name = record.recordName
        guard !record.recordType.isEmpty else {
            throw ShareError(.badRequest, "a new record needs a record type", subject: subject)
        }
        if let problem = CloudKitLimits.recordNameProblem(name) {
            throw ShareError(.badRequest, problem, subject: subject)
        }
        var parentRow: RecordRow?
        if let parent = record.parent {
            if parent == name { throw ShareError(.badRequest, "a record cannot be its own parent", subject: subject) }
            parentRow = try self.parentRow(parent, subject: subject)
        }
        if context.scope == .shared {
            let share = context.zoneShare ?? parentRow?.shareRoot.flatMap { context.sharesByRoot[$0] }
            if let refusal = AccessRules.create(caller: caller, zoneOwner: owner, share: share, subject: subject) {
                throw refusal
            }
        }
        if nameTaken {
            throw ShareError(.exists, "a record named \(name) already exists in this zone", subject: subject)
        }
        try validateReferences(record.fields, selfName: name, subject: subject)
        if let refusal = CloudKitLimits.checkRecord(record.fields, subject: subject) { throw refusal }
        try admit(record.recordType, record.fields, subject: subject)
        let row = RecordRow(
            zoneId: zoneId, name: name, type: record.recordType,
            fields: encodedFields ?? PackedFields.pack(record.fields),
            parent: record.parent, shareRoot: parentRow?.shareRoot, seq: nextSeq(), createdAt: now, createdBy: caller,
            modifiedAt: now, modifiedBy: caller)
        try row.insert(in: db)
        try writeReferences(name, fields: record.fields, replacing: false)
        remember(row, as: name)
        // Records left under this name by an earlier deletion are its children again: they join its hierarchy.
        // Only hierarchy shares give records a hierarchy, so a zone without one has nothing to place.
        if !context.sharesByRoot.isEmpty { try placeChildren(of: name, under: row.shareRoot) }
        return .saved(
            Record(
                recordName: name, recordType: record.recordType, zoneID: context.visibleZoneID, fields: record.fields,
                parent: record.parent, changeTag: row.changeTag,
                created: Stamp(timestamp: now, userRecordName: caller),
                modified: Stamp(timestamp: now, userRecordName: caller)))
    }

    /// Keeps the `reference` table (what a deletion cascades to) in step with a record's fields.
    private func writeReferences(_ name: String, fields: [String: FieldValue], replacing: Bool) throws {
        if replacing {
            try db.cachedStatement(sql: "DELETE FROM reference WHERE zoneId = ? AND source = ?")
                .execute(arguments: [zoneId, name])
        }
        for target in Set(FieldCoding.deleteSelfTargets(fields, zoneName: context.zone.name)) {
            try ReferenceRow(zoneId: zoneId, source: name, target: target).insert(db, onConflict: .ignore)
        }
    }

    /// Changes `existing`, which the caller may write (`checkMayWrite`).
    private mutating func update(_ existing: RecordRow, with record: Record, replacing: Bool, subject: String)
        throws -> RecordOutcome
    {
        let name = existing.name
        if !record.recordType.isEmpty, record.recordType != existing.type {
            throw ShareError(
                .badRequest, "a record's type cannot change (it is \(existing.type), not \(record.recordType))",
                subject: subject)
        }
        let oldFields = try PackedFields.unpack(existing.fields)
        var fields = record.fields
        if !replacing { fields = oldFields.merging(record.fields) { _, new in new } }
        // A reference the save keeps as it was may have been written by someone who may read its target when
        // this caller may not (a participant editing another field): it is checked against what exists.
        try validateReferences(fields.filter { oldFields[$0.key] != $0.value }, selfName: name, subject: subject)
        try validateReferences(
            fields.filter { oldFields[$0.key] == $0.value }, selfName: name, subject: subject, kept: true)
        if let refusal = CloudKitLimits.checkRecord(fields, subject: subject) { throw refusal }

        // An update that names no parent keeps the record where it is; a replace sets it.
        let newParent = replacing ? record.parent : (record.parent ?? existing.parent)
        var newShareRoot = existing.shareRoot
        var movedSubtree: [String] = []
        if newParent != existing.parent {
            var parentRow: RecordRow?
            if let newParent {
                parentRow = try self.parentRow(newParent, subject: subject)
                if try ancestors(of: newParent).contains(name) {
                    throw ShareError(
                        .badRequest, "making \(newParent) the parent of \(name) would make a parent cycle",
                        subject: subject)
                }
            }
            let isRoot = context.sharesByRoot[name] != nil
            newShareRoot = isRoot ? name : parentRow?.shareRoot
            if newShareRoot != existing.shareRoot {
                if context.scope == .shared {
                    let destination = newShareRoot.flatMap { context.sharesByRoot[$0] }
                    if let refusal = AccessRules.create(
                        caller: caller, zoneOwner: owner, share: destination, subject: subject)
                    {
                        throw refusal
                    }
                }
                movedSubtree = try descendants(of: name)
                if newShareRoot != nil {
                    for descendant in movedSubtree where try row(descendant)?.shareRoot != existing.shareRoot {
                        throw ShareError(
                            .badRequest,
                            "\(descendant), under \(name), is shared on its own; a record takes part in one share only",
                            subject: subject)
                    }
                }
            }
        }
        try admit(existing.type, record.fields, subject: subject)
        var row = existing
        row.fields = PackedFields.pack(fields)
        row.parent = newParent
        row.shareRoot = newShareRoot
        row.seq = nextSeq()
        row.modifiedAt = now
        row.modifiedBy = caller
        row.tagSeq = nil
        var update = DirectStatement(
            try db.cachedStatement(
                sql: """
                    UPDATE record SET fields = ?, parent = ?, shareRoot = ?, seq = ?, modifiedAt = ?, modifiedBy = ?,
                      tagSeq = NULL
                    WHERE zoneId = ? AND name = ?
                    """))
        update.bind(row.fields)
        update.bind(row.parent)
        update.bind(row.shareRoot)
        update.bind(row.seq)
        update.bind(row.modifiedAt)
        update.bind(row.modifiedBy)
        update.bind(zoneId)
        update.bind(name)
        try update.run()
        let hadReferences = !FieldCoding.deleteSelfTargets(oldFields, zoneName: context.zone.name).isEmpty
        if hadReferences || !FieldCoding.deleteSelfTargets(fields, zoneName: context.zone.name).isEmpty {
            try writeReferences(name, fields: fields, replacing: true)
        }
        remember(row, as: name)
        for descendant in movedSubtree { try setShareRoot(descendant, to: newShareRoot) }
        return .saved(
            try row.record(in: context.visibleZoneID, shareRecordName: context.sharesByRoot[name]?.recordName))
    }

    /// Deletes `existing`, which the caller may delete (`checkMayWrite`).
    private mutating func delete(_ existing: RecordRow, subject: String) throws -> RecordOutcome {
        let name = existing.name
        // DELETE_SELF references cascade, breadth first.
        var queue = [name]
        var deleted = Set<String>()
        var removed: [RecordRow] = []
        while let next = queue.first {
            queue.removeFirst()
            guard !deleted.contains(next), let row = try row(next) else { continue }
            deleted.insert(next)
            try removeRow(row)
            removed.append(row)
            queue += try String.fetchAll(
                db, sql: "SELECT source FROM reference WHERE zoneId = ? AND target = ?", arguments: [zoneId, next])
        }
        // The records under a deleted record stay, but their parent chain no longer leads to the hierarchy's
        // root, so they leave its share, as a record moved out of the hierarchy does (else a participant could
        // still change a record whose parent the owner had deleted).
        for row in removed where row.shareRoot != nil { try placeChildren(of: row.name, under: nil) }
        return .deleted(recordName: name)
    }

    private mutating func removeRow(_ row: RecordRow) throws {
        try db.cachedStatement(sql: "DELETE FROM record WHERE zoneId = ? AND name = ?")
            .execute(arguments: [zoneId, row.name])
        try db.cachedStatement(sql: "DELETE FROM reference WHERE zoneId = ? AND source = ?")
            .execute(arguments: [zoneId, row.name])
        try writeTombstone(row.name, shareRoot: row.shareRoot)
        remember(nil, as: row.name)
        if let share = context.sharesByRoot[row.name] {
            // Deleting the root of a hierarchy ends its share.
            try removeShare(share)
        }
    }
}
