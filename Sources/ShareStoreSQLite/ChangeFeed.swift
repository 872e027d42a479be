import GRDB
import ShareKit

/// Database and zone changes since a token, read from sequence numbers and tombstones.
enum ChangeFeed {
    static func databaseChanges(
        in database: DatabaseScope, since token: ChangeToken?, user: UserRecordName, db: Database
    )
        throws -> DatabaseChanges
    {
        let epoch = try CounterRow.epoch(db)
        let since = try ChangeSequence.seq(token, epoch: epoch)
        let current = try CounterRow.current(db)
        var changed: [ZoneID] = []
        var deleted: [ZoneID] = []
        switch database {
        case .public:
            let seq = try ZoneRow.all().publicZone().fetchOne(db)?.seq ?? 0
            if seq > since { changed.append(ZoneID(zoneName: defaultZoneName)) }
        case .private:
            changed = try String.fetchAll(
                db, sql: "SELECT name FROM zone WHERE scope = ? AND owner = ? AND seq > ? ORDER BY seq",
                arguments: [DatabaseScope.private, user, since]
            ).map { ZoneID(zoneName: $0) }
            deleted = try String.fetchAll(
                db,
                sql: """
                    SELECT r.zoneName FROM zoneRemoval r
                    WHERE r.scope = ?1 AND r.user = ?2 AND r.seq > ?3
                      AND NOT EXISTS (SELECT 1 FROM zone z WHERE z.scope = ?1 AND z.owner = r.owner AND z.name = r.zoneName)
                    ORDER BY r.seq
                    """, arguments: [DatabaseScope.private, user, since]
            ).map { ZoneID(zoneName: $0) }
        case .shared:
            let visibleNow = try SharedZones.visible(to: user, db: db)
            changed = visibleNow.filter { $0.zone.seq > since }.map(\.visibleZoneID)
            let visibleIDs = Set(visibleNow.map(\.visibleZoneID))
            deleted = try Row.fetchAll(
                db,
                sql:
                    "SELECT owner, zoneName FROM zoneRemoval WHERE scope = ? AND user = ? AND seq > ? ORDER BY seq",
                arguments: [DatabaseScope.shared, user, since]
            ).map { ZoneID(zoneName: $0[1], ownerRecordName: $0[0]) }.filter { !visibleIDs.contains($0) }
        }
        return DatabaseChanges(
            changedZones: changed, deletedZones: deleted, token: ChangeSequence.token(current, epoch: epoch),
            moreComing: false)
    }

    /// A change of a zone's feed beside its records.
    private enum Change {
        case share(Share, Int64)
        case deletion(String, Int64)

        var seq: Int64 {
            switch self {
            case .share(_, let s): s
            case .deletion(_, let s): s
            }
        }
    }

    /// The zone as `user` reaches it in `database`, with the filter of the records they may read: nothing,
    /// or the hierarchies of the shares they accepted (`AND shareRoot IN (…)` and its arguments).
    private static func readableZone(_ zoneID: ZoneID, in database: DatabaseScope, user: UserRecordName, db: Database)
        throws -> (context: ZoneContext, rootFilter: String, roots: [String])
    {
        let context = try ZoneContext.resolve(zoneID, scope: database, caller: user, db: db, createDefault: false)
        if database == .shared, !context.isVisibleInSharedDatabase {
            throw context.notShared()
        }
        guard let roots = context.readableRoots else { return (context, "", []) }
        return (
            context, " AND shareRoot IN (\(Array(repeating: "?", count: max(roots.count, 1)).joined(separator: ",")))",
            roots.isEmpty ? [""] : roots.sorted()
        )
    }

    static func zoneChanges(
        _ zoneID: ZoneID, in database: DatabaseScope, since token: ChangeToken?, limit: Int?, user: UserRecordName,
        db: Database
    ) throws -> ZoneChanges {
        let records = RecordOutcomes()
        var changes = try zoneChanges(
            zoneID, in: database, since: token, limit: limit, user: user, db: db, into: records)
        changes.changedRecords = try records.records()
        return changes
    }

    /// The zone's changes since `token`, at most `limit` of them in the order they were made, each changed record
    /// handed to `receiver` as it is read (by its index among the page's records, from 0; no `Record` made for
    /// it): the page's shares, deletions, token and `moreComing`, its `changedRecords` empty. The emulator
    /// answers `changes/zone` so, as it answers lookups and queries.
    static func zoneChanges(
        _ zoneID: ZoneID, in database: DatabaseScope, since token: ChangeToken?, limit: Int?, user: UserRecordName,
        db: Database, into receiver: some RecordReceiver
    ) throws -> ZoneChanges {
        let epoch = try CounterRow.epoch(db)
        let since = try ChangeSequence.seq(token, epoch: epoch)
        let current = try CounterRow.current(db)
        let (context, rootFilter, roots) = try readableZone(zoneID, in: database, user: user, db: db)
        let fetchLimit = limit.map { max($0, 1) + 1 } ?? -1
        // Deletions and shares, few beside the records: read first, then merged into the records' order as the
        // records are read.
        var tombstoneArguments: StatementArguments = [context.zoneId, since]
        tombstoneArguments += StatementArguments(roots)
        tombstoneArguments += [fetchLimit]
        // Statements kept prepared: preparing them (GRDB's authorizer included) was a quarter of serve's time
        // reading a zone's changes, read 100 times after an apply of 100 zones.
        var others: [Change] = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT t.name, t.seq FROM tombstone t WHERE t.zoneId = ? AND t.seq > ?\(rootFilter)
                      AND NOT EXISTS (SELECT 1 FROM record r WHERE r.zoneId = t.zoneId AND r.name = t.name)
                      AND NOT EXISTS (SELECT 1 FROM share s WHERE s.zoneId = t.zoneId AND s.name = t.name)
                    ORDER BY t.seq LIMIT ?
                    """), arguments: tombstoneArguments
        ).map { .deletion($0[0], $0[1]) }
        let shareSeqs = try Row.fetchAll(
            db.cachedStatement(sql: "SELECT name, seq FROM share WHERE zoneId = ? AND seq > ?"),
            arguments: [context.zoneId, since])
        for row in shareSeqs {
            let name: String = row[0]
            if let share = context.readableShares.first(where: { $0.recordName == name }) {
                others.append(.share(share, row[1]))
            }
        }
        others.sort { $0.seq < $1.seq }
        let capacity = limit.map { max($0, 1) } ?? Int.max
        var changes = ZoneChanges(
            zoneID: context.visibleZoneID, changedRecords: [], changedShares: [], deletedRecordNames: [],
            token: ChangeToken(rawValue: ""), moreComing: false)
        var taken = 0
        var records = 0
        var last = since
        var next = 0
        // Takes the deletions and shares made before `seq`; false when the page is full before one of them.
        func takeOthers(before seq: Int64) -> Bool {
            while next < others.count, others[next].seq < seq {
                guard taken < capacity else { return false }
                switch others[next] {
                case .share(let share, _): changes.changedShares.append(share)
                case .deletion(let name, _): changes.deletedRecordNames.append(name)
                }
                last = others[next].seq
                taken += 1
                next += 1
            }
            return true
        }
        var select = DirectStatement(
            try db.cachedStatement(
                sql:
                    "SELECT \(RecordRow.selection) FROM record WHERE zoneId = ? AND seq > ?\(rootFilter) ORDER BY seq LIMIT ?"
            ))
        select.bind(context.zoneId)
        select.bind(since)
        select.bind(contentsOf: roots)
        select.bind(Int64(fetchLimit))
        try select.forEachRow { row in
            let seq = RecordRow.seq(of: row)
            guard takeOthers(before: seq), taken < capacity else {
                changes.moreComing = true
                return false
            }
            let name = row.string(1)
            try receiver.receive(
                RecordRow.reading(
                    row, in: context.visibleZoneID, shareRecordName: context.sharesByRoot[name]?.recordName),
                at: records)
            records += 1
            taken += 1
            last = seq
            return true
        }
        if !changes.moreComing, !takeOthers(before: .max) { changes.moreComing = true }
        changes.token = ChangeSequence.token(changes.moreComing ? last : current, epoch: epoch)
        return changes
    }

    /// Every record of the zone `user` may read, with its change tag, the shares they may read, and the
    /// zone's token; nil when the zone does not exist. Reads records' names and sequence numbers only, never
    /// their fields.
    static func zoneTags(_ zoneID: ZoneID, in database: DatabaseScope, user: UserRecordName, db: Database) throws
        -> ZoneTags?
    {
        let epoch = try CounterRow.epoch(db)
        let current = try CounterRow.current(db)
        let (context, rootFilter, roots): (ZoneContext, String, [String])
        do {
            (context, rootFilter, roots) = try readableZone(zoneID, in: database, user: user, db: db)
        } catch let error as ShareError where error.code == .zoneNotFound {
            return nil
        }
        guard context.exists else { return nil }
        // Through SQLite's C API: an apply's plan cache reads every record's tag after it writes them.
        var select = DirectStatement(
            try db.cachedStatement(sql: "SELECT name, seq, tagSeq FROM record WHERE zoneId = ?\(rootFilter)"))
        select.bind(context.zoneId)
        select.bind(contentsOf: roots)
        var records: [String: String] = [:]
        try select.forEachRow { row in
            records[row.string(0)] = RecordRow.changeTag(seq: row.int64(1), tagSeq: row.optionalInt64(2))
            return true
        }
        return ZoneTags(
            records: records, shares: context.readableShares, token: ChangeSequence.token(current, epoch: epoch))
    }
}
