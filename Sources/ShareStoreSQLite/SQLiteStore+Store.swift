import Foundation
import GRDB
import ShareKit

// MARK: - Store

extension SQLiteStore: ReadsRecordsInPlace {
    // MARK: Records

    public func lookupRecords(
        _ recordNames: [String], in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName
    ) async throws -> [RecordOutcome] {
        let outcomes = RecordOutcomes()
        try await readRecords(recordNames, in: zoneID, database: database, as: user, into: outcomes)
        return try outcomes.outcomes()
    }

    /// Records the caller may read are handed over in place, as their rows are read (`RecordRow.reading`).
    package func readRecords(
        _ recordNames: [String], in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName,
        into receiver: some RecordReceiver
    ) async throws {
        try Self.admit(user, .read, database)
        try await read("looking up records") { db in
            let context: ZoneContext
            do {
                context = try ZoneContext.resolve(zoneID, scope: database, caller: user, db: db, createDefault: false)
                // Someone's zone that is not in the caller's shared database answers as a missing zone does.
                if database == .shared, !context.isVisibleInSharedDatabase {
                    throw context.notShared()
                }
            } catch let error as ShareError {
                for (index, name) in recordNames.enumerated() {
                    try receiver.receive(.failed(recordName: name, error), at: index)
                }
                return
            }
            // Each name's place in the answer, and the later places of a name asked more than once: its row is
            // read once (`IN` matches a row once however often it lists the name) and handed over for each.
            var places = [String: Int](minimumCapacity: recordNames.count)
            var laterPlaces: [String: [Int]] = [:]
            for (index, name) in recordNames.enumerated() {
                if places[name] == nil { places[name] = index } else { laterPlaces[name, default: []].append(index) }
            }
            var answered = [Bool](repeating: false, count: recordNames.count)
            var hidden: Set<String> = []
            let visibleZoneID = context.visibleZoneID
            try RecordRow.forEachRow(db, zoneId: context.zoneId, names: recordNames) { row in
                let name = row.string(1)
                // A share is answered below; a name not asked is not in `IN`'s rows.
                guard let place = places[name], context.sharesByName[name] == nil else { return }
                let shareRoot = row.optionalString(5)
                // A record the caller may not read is answered below as a missing one is.
                guard context.canRead(shareRoot: shareRoot) else {
                    hidden.insert(name)
                    return
                }
                let reading = RecordRow.reading(
                    row, in: visibleZoneID, shareRecordName: context.sharesByRoot[name]?.recordName)
                try receiver.receive(reading, at: place)
                answered[place] = true
                for later in laterPlaces[name] ?? [] {
                    try receiver.receive(reading, at: later)
                    answered[later] = true
                }
            }
            // Spelled only for an answer that needs it: most are records read.
            func subject(_ name: String) -> String { "\(zoneID.zoneName)/\(name)" }
            for (index, name) in recordNames.enumerated() where !answered[index] {
                let outcome: RecordOutcome
                if let share = context.sharesByName[name] {
                    if database == .shared,
                        AccessRules.read(caller: user, zoneOwner: context.owner, share: share, subject: subject(name))
                            != nil
                    {
                        outcome = .failed(
                            recordName: name, context.unknownRecord(name, subject: subject(name), hidden: true))
                    } else {
                        outcome = .savedShare(share)
                    }
                } else {
                    // Missing, or not the caller's to read: one answer, so that it tells nothing of what exists.
                    outcome = .failed(
                        recordName: name,
                        context.unknownRecord(name, subject: subject(name), hidden: hidden.contains(name)))
                }
                try receiver.receive(outcome, at: index)
            }
        }
    }

    public func queryRecords(
        _ query: RecordQuery, in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName
    ) async throws -> QueryPage {
        let records = RecordOutcomes()
        let marker = try await readQuery(query, in: zoneID, database: database, as: user, into: records)
        return QueryPage(records: try records.records(), continuationMarker: marker)
    }

    /// In record name order with no filters, records are handed over in place, as their rows are read
    /// (`RecordRow.reading`); others are made whole to be matched or sorted.
    package func readQuery(
        _ query: RecordQuery, in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName,
        into receiver: some RecordReceiver
    ) async throws -> String? {
        try Self.admit(user, .read, database)
        let environment = self.environment
        return try await read("querying records") { db in
            let context = try ZoneContext.resolve(zoneID, scope: database, caller: user, db: db, createDefault: false)
            if let refusal = SchemaRules.checkQuery(query, schema: try SchemaRow.schema(db, environment)) {
                throw refusal
            }
            var sql = "SELECT \(RecordRow.selection) FROM record WHERE zoneId = ? AND type = ?"
            let roots = context.readableRoots?.sorted()
            if let roots {
                guard !roots.isEmpty else { throw context.notShared() }
                sql += " AND shareRoot IN (\(Array(repeating: "?", count: roots.count).joined(separator: ",")))"
            }
            // The statement of `sql` and `tail`, its arguments bound up to the tail's.
            func select(_ tail: String = "") throws -> DirectStatement {
                var select = DirectStatement(try db.cachedStatement(sql: sql + tail))
                select.bind(context.zoneId)
                select.bind(query.recordType)
                if let roots { select.bind(contentsOf: roots) }
                return select
            }
            let limit = query.resultsLimit.map { max($0, 1) } ?? Int.max
            let visibleZoneID = context.visibleZoneID
            // Records read from the row in place, named `name` (its column 1).
            func reading(_ row: borrowing DirectStatement.Columns, named name: String) -> RecordReading {
                RecordRow.reading(row, in: visibleZoneID, shareRecordName: context.sharesByRoot[name]?.recordName)
            }
            func matches(_ record: Record) -> Bool {
                query.filters.allSatisfy { QueryEvaluation.matches(record, $0) }
            }
            if query.sort.isEmpty {
                // In record name order, a page starts after the last name of the previous one: each page reads
                // only as far as it needs.
                var after = ""
                if let marker = query.continuationMarker {
                    guard marker.hasPrefix("k") else {
                        throw ShareError(
                            .badRequest, "the continuation marker '\(marker)' was not handed out by this store")
                    }
                    after = String(marker.dropFirst())
                }
                var count = 0
                var last: String?
                var more = false
                while !more {
                    // No further than the page needs.
                    var chunk = try select(" AND name > ? ORDER BY name LIMIT 500")
                    chunk.bind(after)
                    var read = 0
                    try chunk.forEachRow { row in
                        read += 1
                        let name = row.string(1)
                        after = name
                        let inPlace = reading(row, named: name)
                        // Made whole only to be matched.
                        let record = query.filters.isEmpty ? nil : try inPlace.record()
                        if let record, !matches(record) { return true }
                        if count == limit {
                            more = true
                            return false
                        }
                        if let record {
                            try receiver.receive(.saved(record), at: count)
                        } else {
                            try receiver.receive(inPlace, at: count)
                        }
                        count += 1
                        last = name
                        return true
                    }
                    guard read == 500 else { break }
                }
                return more ? last.map { "k" + $0 } : nil
            }
            // Sorted by fields: every matching record is read and sorted, then paged by position.
            var records: [Record] = []
            try select().forEachRow { row in
                let record = try reading(row, named: row.string(1)).record()
                if matches(record) { records.append(record) }
                return true
            }
            records.sort { QueryEvaluation.ordered($0, $1, by: query.sort) }
            var offset = 0
            if let marker = query.continuationMarker {
                guard marker.hasPrefix("o"), let value = Int(marker.dropFirst()), value >= 0 else {
                    throw ShareError(
                        .badRequest, "the continuation marker '\(marker)' was not handed out by this store")
                }
                offset = value
            }
            let page = records.dropFirst(offset).prefix(limit)
            for (index, record) in page.enumerated() { try receiver.receive(.saved(record), at: index) }
            let end = offset + page.count
            return end < records.count ? "o\(end)" : nil
        }
    }

    public func modifyRecords(_ zoneWrite: ZoneWrite, as user: UserRecordName) async throws -> [RecordOutcome] {
        let (zoneID, database, atomic) = (zoneWrite.zoneID, zoneWrite.database, zoneWrite.atomic)
        try Self.admit(user, .write, database)
        try Self.checkWhole(zoneWrite.operations, in: zoneID, atomic: atomic)
        let now = Self.now
        let environment = self.environment
        let (operations, assets) = try keepingLocalAssets(zoneWrite.operations, files: zoneWrite.assetFiles)
        let encoded = RecordBatch.encodedForCreate(operations)
        return try await write("modifying records") { db in
            try Self.modify(
                operations, encoded: encoded, assets: assets, in: zoneID, database: database, atomic: atomic,
                as: user, now: now, environment: environment, db: db)
        }
    }

    /// Every zone's operations in one transaction: an apply writes a hundred zones, and a transaction each
    /// cost a commit each (a tenth of an apply of 10,000 records).
    public func modifyRecords(_ writes: [ZoneWrite], as user: UserRecordName) async
        -> [Result<[RecordOutcome], any Error>]
    {
        do {
            let now = Self.now
            let environment = self.environment
            var prepared: [(ZoneWrite, [(checksum: String, bytes: Data)], [Data?])] = []
            prepared.reserveCapacity(writes.count)
            for var write in writes {
                try Self.admit(user, .write, write.database)
                try Self.checkWhole(write.operations, in: write.zoneID, atomic: write.atomic)
                let assets: [(checksum: String, bytes: Data)]
                (write.operations, assets) = try keepingLocalAssets(write.operations, files: write.assetFiles)
                prepared.append((write, assets, RecordBatch.encodedForCreate(write.operations)))
            }
            let writes = prepared
            let outcomes = try await write("modifying records in \(writes.count) zones") { db in
                try writes.map { write, assets, encoded in
                    try Self.modify(
                        write.operations, encoded: encoded, assets: assets, in: write.zoneID,
                        database: write.database, atomic: write.atomic, as: user, now: now,
                        environment: environment, db: db)
                }
            }
            return outcomes.map { .success($0) }
        } catch {
            // Nothing was written: every write answers the failure.
            return writes.map { _ in .failure(error) }
        }
    }

    /// Refuses a call that CloudKit refuses as a whole (`ModifyRules`), before anything is kept or written.
    private static func checkWhole(_ operations: [RecordOperation], in zoneID: ZoneID, atomic: Bool) throws(ShareError)
    {
        if let refusal = ModifyRules.atomicBatch(zoneID, atomic: atomic, operationCount: operations.count) {
            throw refusal
        }
        if let refusal = ModifyRules.missingChangeTag(operations) { throw refusal }
    }

    /// One zone's operations inside the caller's write transaction.
    /// - Parameter encoded: each operation's fields encoded for a create, or nil (`RecordBatch.encodedForCreate`).
    private static func modify(
        _ operations: [RecordOperation], encoded: [Data?], assets: [(checksum: String, bytes: Data)], in zoneID: ZoneID,
        database: DatabaseScope,
        atomic: Bool, as user: UserRecordName, now: Int64, environment: CloudKitEnvironment, db: Database
    ) throws -> [RecordOutcome] {
        try Self.keep(assets, db: db)
        let context: ZoneContext
        do {
            context = try ZoneContext.resolve(zoneID, scope: database, caller: user, db: db, createDefault: true)
        } catch let error as ShareError {
            return operations.map { .failed(recordName: $0.recordName, error) }
        }
        let before = try SubscriptionFiring.snapshot(operations, context: context, db: db)
        var batch = try RecordBatch(context: context, db: db, now: now, environment: environment)
        try batch.prefetch(operations)
        var outcomes: [RecordOutcome] = []
        outcomes.reserveCapacity(operations.count)
        if atomic {
            try db.inSavepoint {
                for (op, fields) in zip(operations, encoded) {
                    outcomes.append(try batch.apply(op, encodedFields: fields))
                }
                return outcomes.contains { $0.error != nil } ? .rollback : .commit
            }
            if outcomes.contains(where: { $0.error != nil }) {
                let failed = outcomes.compactMap { o -> String? in
                    if case .failed(let name, _) = o { return name }
                    return nil
                }
                outcomes = outcomes.map { outcome in
                    if outcome.error != nil { return outcome }
                    let name: String
                    switch outcome {
                    case .saved(let r): name = r.recordName
                    case .savedShare(let s): name = s.recordName
                    case .deleted(let n): name = n
                    case .failed(let n, _): name = n
                    }
                    return .failed(
                        recordName: name,
                        ShareError(
                            .atomicError,
                            "not applied: the atomic batch failed at \(failed.joined(separator: ", "))",
                            subject: "\(zoneID.zoneName)/\(name)"))
                }
                return outcomes
            }
        } else {
            for (op, fields) in zip(operations, encoded) {
                outcomes.append(try batch.apply(op, encodedFields: fields))
            }
        }
        outcomes = try batch.finalOutcomes(outcomes)
        try batch.finish()
        if let before {
            try SubscriptionFiring.fire(outcomes, before: before, context: context, by: user, db: db)
        }
        return outcomes
    }

    // MARK: Changes

    public func databaseChanges(in database: DatabaseScope, since token: ChangeToken?, as user: UserRecordName)
        async throws -> DatabaseChanges
    {
        try Self.admit(user, .read, database)
        return try await read("reading database changes") { db in
            try ChangeFeed.databaseChanges(in: database, since: token, user: user, db: db)
        }
    }

    public func zoneChanges(
        _ zoneID: ZoneID, in database: DatabaseScope, since token: ChangeToken?, resultsLimit: Int?,
        as user: UserRecordName
    ) async throws -> ZoneChanges {
        try Self.admit(user, .read, database)
        return try await read("reading zone changes") { db in
            try ChangeFeed.zoneChanges(zoneID, in: database, since: token, limit: resultsLimit, user: user, db: db)
        }
    }

    package func readZoneChanges(
        _ zoneID: ZoneID, in database: DatabaseScope, since token: ChangeToken?, resultsLimit: Int?,
        as user: UserRecordName, into receiver: some RecordReceiver
    ) async throws -> ZoneChanges {
        try Self.admit(user, .read, database)
        return try await read("reading zone changes") { db in
            try ChangeFeed.zoneChanges(
                zoneID, in: database, since: token, limit: resultsLimit, user: user, db: db, into: receiver)
        }
    }

    /// All the zones' tags in one read transaction, from the rows' names and sequence numbers, without reading
    /// a record's fields.
    public func zoneTags(_ zoneIDs: [ZoneID], in database: DatabaseScope, as user: UserRecordName) async throws
        -> [ZoneTags?]
    {
        try Self.admit(user, .read, database)
        return try await read("reading zone change tags") { db in
            try zoneIDs.map { try ChangeFeed.zoneTags($0, in: database, user: user, db: db) }
        }
    }

    // MARK: Callers without a signed-in user

    /// Refuses what a caller without a signed-in user may not do (`AccessRules.unauthenticated`).
    static func admit(_ user: UserRecordName, _ intent: AccessRules.Intent, _ database: DatabaseScope) throws {
        if let refusal = AccessRules.unauthenticated(caller: user, intent: intent, database: database) { throw refusal }
    }

    // MARK: Maintenance

    /// Copies the write-ahead log into the database file on the writer's connection, in the background, while
    /// the caller reads on others: closing the store then has nothing left to copy. A passive checkpoint waits
    /// for no reader and no writer, and a failed one leaves the log as it was, for the next.
    public func finishedWriting() {
        writer.asyncWriteWithoutTransaction { db in
            _ = try? db.checkpoint(.passive)
        }
    }

    public func reset() async throws {
        try await write("resetting the store") { db in
            for table in [
                "participant", "share", "reference", "tombstone", "record", "zoneRemoval", "zone", "user",
                "recordSchema", "subscription", "notification", "notificationChannel", "asset",
            ] {
                try db.execute(sql: "DELETE FROM \(table)")
            }
            try db.execute(sql: "DELETE FROM sqlite_sequence WHERE name = 'zone'")
            // A new epoch: change tokens handed out before the reset are refused, not read as "nothing changed".
            try db.execute(sql: "UPDATE counter SET seq = 0, epoch = ?", arguments: [ChangeSequence.newEpoch()])
            var publicZone = ZoneRow(id: nil, scope: .public, owner: ZoneRow.publicOwner, name: defaultZoneName, seq: 0)
            try publicZone.insert(db)
        }
        logger.info("reset store", metadata: ["store": "\(displayName)"])
    }
}
