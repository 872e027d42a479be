import Foundation
import GRDB
import ShareKit

/// One `modifyRecords` call: its operations applied in order inside the caller's transaction.
///
/// Rows the batch touches are fetched once, in one query, and kept in `cache` as the batch writes; the
/// hierarchy a record belongs to is its `shareRoot` column, so access checks need no walk up parent chains.
///
/// An operation the rules refuse throws a `ShareError` before it writes anything (a share's operation runs in
/// a savepoint, as saving it may create users first); `apply` turns it into the operation's outcome, the one
/// place that does. Records live in `RecordBatch+Records.swift`, shares in `RecordBatch+Shares.swift`.
struct RecordBatch {
    var context: ZoneContext
    let db: Database
    var sequence: ChangeSequence
    let now: Int64
    /// Rows by record name: `.some(nil)` is a row known not to exist.
    private var cache: [String: RecordRow?] = [:]
    /// The environment whose schema the writes follow, and that schema as the batch has grown it.
    let environment: CloudKitEnvironment
    private(set) var schema: Schema
    private var schemaGrew = false
    /// Records whose share this batch saved or deleted: a share's save rewrites its root record.
    private var rewrittenRoots: Set<String> = []
    /// The change tag each of `rewrittenRoots` had before its share's save rewrote it. A root saved with its
    /// share in one request is one change: the root's own save is checked against the tag the client read,
    /// whether the request names the share first (as CloudKit JS apps often do) or the root.
    private var tagsBeforeShareSave: [String: String] = [:]

    init(context: ZoneContext, db: Database, now: Int64, environment: CloudKitEnvironment) throws {
        self.context = context
        self.db = db
        self.now = now
        self.environment = environment
        self.sequence = try ChangeSequence.read(db)
        self.schema = try SchemaRow.schema(db, environment)
    }

    /// Admits a record's type and fields into the schema (`SchemaRules.admit`); call just before writing, after
    /// every other check, so a refused operation adds nothing.
    mutating func admit(_ recordType: String, _ fields: [String: FieldValue], subject: String) throws {
        if try SchemaRules.admit(
            recordType: recordType, fields: fields, into: &schema, environment: environment, subject: subject)
        {
            schemaGrew = true
        }
    }

    /// Admits the share record type (`SchemaRules.admitShare`).
    mutating func admitShare(subject: String) throws {
        guard schema.recordTypes[shareRecordType] == nil else { return }
        try SchemaRules.admitShare(into: &schema, environment: environment, subject: subject)
        schemaGrew = true
    }

    var zoneId: Int64 { context.zoneId }
    var caller: UserRecordName { context.caller }
    var owner: UserRecordName { context.owner }

    /// The sequence number of the next write.
    mutating func nextSeq() -> Int64 { sequence.next() }

    /// How a refusal names what it refuses: the zone and the record.
    func subject(_ name: String) -> String { "\(context.visibleZoneID.zoneName)/\(name)" }

    // MARK: - Operations

    /// Applies one operation.
    /// - Returns: what it saved or deleted, or `.failed` with the rule that refused it (nothing written).
    /// - Throws: what the database throws, and a damaged store's `INTERNAL_ERROR`: the call fails as a whole.
    /// - Parameter encodedFields: the record's fields as `PackedFields.pack` gives them, when the caller
    ///   encoded them before the transaction (`encodedForCreate`); a create writes them as they are.
    mutating func apply(_ op: RecordOperation, encodedFields: Data? = nil) throws -> RecordOutcome {
        do {
            switch op.item {
            case .record(let record):
                // A delete may name a record by its name alone (CloudKit JS's `deleteRecords` sends no type): a
                // share's name deletes that share.
                if op.kind.isDelete, record.recordType.isEmpty, var share = context.sharesByName[record.recordName] {
                    share.changeTag = record.changeTag
                    return try apply(RecordOperation(op.kind, share: share))
                }
                return try applyRecord(op.kind, record, encodedFields: encodedFields)
            case .share(let share):
                let schemaBefore = (schema, schemaGrew)
                do {
                    var outcome: RecordOutcome?
                    try db.inSavepoint {
                        outcome = try applyShare(op.kind, share)
                        return .commit
                    }
                    guard let outcome else { throw ShareError(.internalError, "a share operation ran to no outcome") }
                    return outcome
                } catch let refusal as ShareError where refusal.code != .internalError {
                    // The savepoint undid what the operation wrote: forget what it read and loaded, too.
                    try context.loadShares(db)
                    cache.removeAll()
                    (schema, schemaGrew) = schemaBefore
                    throw refusal
                }
            }
        } catch let refusal as ShareError where refusal.code != .internalError {
            return .failed(recordName: op.recordName, refusal)
        }
    }

    /// The outcomes with each saved record as the whole call left it: a root record saved before its share in
    /// the same call is answered with the change tag and share reference the share's save gave it, as CloudKit
    /// answers a record and its share saved together (a client that writes the record again needs that tag).
    mutating func finalOutcomes(_ outcomes: [RecordOutcome]) throws -> [RecordOutcome] {
        guard !rewrittenRoots.isEmpty else { return outcomes }
        var final = outcomes
        for (index, outcome) in outcomes.enumerated() {
            guard case .saved(var record) = outcome, rewrittenRoots.contains(record.recordName),
                let row = try row(record.recordName)
            else { continue }
            record.changeTag = row.changeTag
            record.shareRecordName = context.sharesByRoot[record.recordName]?.recordName
            final[index] = .saved(record)
        }
        return final
    }

    /// Stores the sequence number and marks the zone changed; call once at the end of the call.
    func finish() throws {
        if schemaGrew { try SchemaRow.store(schema, environment, db) }
        guard sequence.advanced else { return }
        try sequence.store(db)
        try db.cachedStatement(sql: "UPDATE zone SET seq = ? WHERE id = ?").execute(arguments: [
            sequence.current, zoneId,
        ])
    }

    /// The fields of the operations that may create a record, encoded (nil for the others): done by the
    /// caller before its write transaction, so that the encoding of one call's records runs while the
    /// database writes another's (the writes of an apply wait on the one writer).
    static func encodedForCreate(_ operations: [RecordOperation]) -> [Data?] {
        operations.map { op in
            guard case .record(let record) = op.item,
                op.kind == .create || op.kind == .forceUpdate || op.kind == .forceReplace
            else { return nil }
            return PackedFields.pack(record.fields)
        }
    }

    // MARK: - Rows

    /// Fetches the rows of these names (and the parents the operations name) in one query.
    mutating func prefetch(_ operations: [RecordOperation]) throws {
        var names = Set<String>()
        names.reserveCapacity(operations.count)
        cache.reserveCapacity(cache.count + operations.count)
        for op in operations {
            names.insert(op.recordName)
            if case .record(let r) = op.item, let parent = r.parent { names.insert(parent) }
            if case .share(let s) = op.item, let root = s.rootRecordName { names.insert(root) }
        }
        try fetch(Array(names))
    }

    private mutating func fetch(_ names: [String]) throws {
        let missing = names.filter { cache[$0] == nil }
        for name in missing { cache[name] = .some(nil) }
        guard !missing.isEmpty, zoneId >= 0 else { return }
        for row in try RecordRow.fetchAll(db, zoneId: zoneId, names: missing) { cache[row.name] = row }
    }

    /// The row of this name, as the batch has left it.
    mutating func row(_ name: String) throws -> RecordRow? {
        if let cached = cache[name] { return cached }
        try fetch([name])
        return cache[name] ?? nil
    }

    /// Notes what the batch wrote (nil: deleted), so later operations read it without a query.
    mutating func remember(_ row: RecordRow?, as name: String) { cache[name] = .some(row) }

    /// The record names above `name` (itself included), following parents; stops at a cycle.
    func ancestors(of name: String) throws -> Set<String> {
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
    func descendants(of name: String) throws -> [String] {
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

    /// Moves one record into (or out of) a hierarchy: a new place in the change feed, so participants hear
    /// of it. Only the hierarchy's root is rewritten (its share changes), so only its change tag changes;
    /// the others keep theirs, as nothing of theirs was written.
    mutating func setShareRoot(_ name: String, to root: String?, isRoot: Bool = false) throws {
        let s = nextSeq()
        guard var row = try row(name) else { return }
        if !isRoot, row.tagSeq == nil { row.tagSeq = row.seq }
        if isRoot {
            if tagsBeforeShareSave[name] == nil { tagsBeforeShareSave[name] = row.changeTag }
            row.tagSeq = nil
            rewrittenRoots.insert(name)
        }
        row.shareRoot = root
        row.seq = s
        try db.cachedStatement(
            sql: "UPDATE record SET shareRoot = ?, seq = ?, tagSeq = ? WHERE zoneId = ? AND name = ?"
        ).execute(arguments: [root, s, row.tagSeq, zoneId, name])
        remember(row, as: name)
    }

    /// Puts the records below `name` in the hierarchy `root` (nil: none), as their parent chain now says: each
    /// takes its parent's hierarchy, except a record that roots a share of its own, which keeps it for itself
    /// and the records below it. Called when `name` is deleted (its children leave) or created again (the
    /// children an earlier deletion left behind come back).
    mutating func placeChildren(of name: String, under root: String?) throws {
        var queue = try children(of: name).map { ($0, root) }
        var placed: Set<String> = [name]
        while let (child, inherited) = queue.popLast() {
            guard placed.insert(child).inserted else { continue }
            let own = context.sharesByRoot[child] != nil ? child : inherited
            if let row = try row(child), row.shareRoot != own { try setShareRoot(child, to: own) }
            queue += try children(of: child).map { ($0, own) }
        }
    }

    /// The records whose parent is `name`.
    func children(of name: String) throws -> [String] {
        try String.fetchAll(
            db, sql: "SELECT name FROM record WHERE zoneId = ? AND parent = ? ORDER BY name",
            arguments: [zoneId, name])
    }

    /// Notes a deleted record or share, for zone changes.
    mutating func writeTombstone(_ name: String, shareRoot: String?) throws {
        try TombstoneRow(zoneId: zoneId, name: name, seq: nextSeq(), shareRoot: shareRoot)
            .insert(db, onConflict: .replace)
    }

    // MARK: - Change tags

    /// Refuses a record's write whose change tag is missing or stale; the tag a root had before this batch
    /// saved its share counts as current for the root's first write after that save (`tagsBeforeShareSave`).
    mutating func checkRecordTag(_ given: String?, current: String, name: String, subject: String) throws(ShareError) {
        if let before = tagsBeforeShareSave.removeValue(forKey: name), given == before { return }
        try Self.checkTag(given, current: current, subject: subject)
    }

    /// Refuses a write whose change tag is missing or no longer the current one.
    static func checkTag(_ given: String?, current: String, subject: String) throws(ShareError) {
        guard let given else {
            throw ShareError(
                .conflict, "no change tag given; fetch the record and send its recordChangeTag, or force the write",
                subject: subject)
        }
        guard given == current else {
            throw ShareError(
                .conflict,
                "the record changed since it was read (change tag \(given), now \(current)); fetch it again and retry",
                subject: subject)
        }
    }
}
