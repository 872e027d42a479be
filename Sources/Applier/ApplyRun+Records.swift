import Foundation
import Logging
import PlanModel
import ShareKit

// MARK: - Records and shares

extension ApplyRun {
    /// One operation and the changes it carries out.
    struct Unit {
        var operations: [(RecordOperation, [Int])]
    }

    /// The private zones' writes, several zones at a time: zones are independent, so while the store writes
    /// one zone's batches the next zone's are built, and over `http:` one request is encoded while the server
    /// answers another. Within a zone, batches go in order (parents before children), one at a time. A store
    /// that writes many zones in one transaction (`batchesInOneTransaction`) gets zones together, up to
    /// `Applier.operationsPerTransaction` operations a call.
    mutating func applyZones(_ zoneOrder: [String], _ changesByZone: [String: [Int]]) async {
        let store = self.store
        let owner = self.owner
        let assetFiles = AssetFiles(plan.assetFiles ?? [:])
        let together = store.capabilities.batchesInOneTransaction
        // A zone's batches are built as it is about to be written, so that its `!share-url` fields find the
        // shares saved in the zones written before it (a field whose share is not saved yet is written later).
        var pending = zoneOrder[...]
        // The first call small and each next one twice the last, up to `operationsPerTransaction`: the store
        // starts writing once the first zone is built, not the first two thousand operations, and each call is
        // built while the store writes the one before.
        var limit = Applier.firstOperationsPerTransaction
        await BoundedTasks.run(limit: zonesInFlight) { () -> [(ZoneID, [Batch])]? in
            var group: [(ZoneID, [Batch])] = []
            var operations = 0
            while !halted, let zone = pending.popFirst() {
                guard let units = zoneUnits(zone, inZone: changesByZone[zone] ?? []) else { continue }
                let batches = Self.batches(units)
                group.append((ZoneID(zoneName: zone), batches))
                operations += batches.reduce(0) { $0 + $1.count }
                if !together || operations >= limit { break }
            }
            limit = min(limit * 2, Applier.operationsPerTransaction)
            return group.isEmpty ? nil : group
        } work: { group in
            let writes = group.flatMap { zoneID, batches in
                batches.map { ZoneWrite($0.map(\.0), in: zoneID, database: .private, assetFiles: assetFiles) }
            }
            return await store.modifyRecords(writes, as: owner)
        } receive: { group, results in
            // The results, one per write, back to their zones; a zone whose writes ended early has fewer.
            var rest = results[...]
            for (zoneID, batches) in group {
                let mine = Array(rest.prefix(batches.count))
                rest = rest.dropFirst(mine.count)
                absorb(batches, mine, zoneID: zoneID, database: .private)
            }
        }
    }

    /// The units of one private zone's changes (`inZone`, their indices in plan order); nil when the zone
    /// could not be created.
    mutating func zoneUnits(_ zone: String, inZone: [Int]) -> [Unit]? {
        if failedZones.contains(zone) {
            fail(inZone, "zone \(zone) was not created")
            return nil
        }
        let zoneID = ZoneID(zoneName: zone)
        var units: [Unit] = []
        var rootUnit: [String: Int] = [:]
        // Record deletions first: saving or stopping a share rewrites the records of its hierarchy, which would
        // make the change tags they were planned from stale.
        for index in inZone where plan.changes[index].kind == .record && plan.changes[index].action == .delete {
            let change = plan.changes[index]
            let record = Record(
                recordName: change.recordName ?? "", recordType: "", zoneID: zoneID, changeTag: change.baseChangeTag)
            units.append(Unit(operations: [(RecordOperation(.delete, record), [index])]))
        }
        for index in inZone where plan.changes[index].kind == .record && plan.changes[index].action != .delete {
            guard let operation = recordOperation(index, zoneID: zoneID) else { continue }
            rootUnit[plan.changes[index].recordName ?? ""] = units.count
            units.append(Unit(operations: [(operation, [index])]))
        }
        // Shares: each share's changes (its own and its participants') become one save of the whole share.
        var sharePaths: [SharePath] = []
        var shareChanges: [SharePath: [Int]] = [:]
        for index in inZone where plan.changes[index].kind == .share || plan.changes[index].kind == .participant {
            let change = plan.changes[index]
            guard let share = change.share, !(change.kind == .share && change.action == .delete) else { continue }
            if shareChanges[share.path] == nil { sharePaths.append(share.path) }
            shareChanges[share.path, default: []].append(index)
        }
        for path in sharePaths {
            guard let members = shareChanges[path], let planned = plan.changes[members[0]].share else { continue }
            // Acceptances are done later, as each participant: a change that only accepts needs no save.
            let saved = members.filter { plan.changes[$0].onlyAccepts != true }
            guard !saved.isEmpty else { continue }
            let operation = RecordOperation(
                planned.baseChangeTag == nil ? .create : .update, share: share(from: planned, zoneID: zoneID))
            if let root = planned.rootRecordName, let unit = rootUnit[root] {
                units[unit].operations.append((operation, saved))
            } else {
                units.append(Unit(operations: [(operation, saved)]))
            }
        }
        for index in inZone where plan.changes[index].kind == .share && plan.changes[index].action == .delete {
            let change = plan.changes[index]
            let share = Share(
                recordName: change.share?.recordName ?? zoneShareRecordName, zoneID: zoneID,
                rootRecordName: change.recordName, ownerRecordName: owner, changeTag: change.baseChangeTag)
            units.append(Unit(operations: [(RecordOperation(.delete, share: share), [index])]))
        }
        return units
    }

    mutating func applyPublicRecords() async {
        let saves = indices(.record, .delete, not: true, in: .public)
        let deletes = indices(.record, .delete, in: .public)
        var units: [Unit] = []
        for index in saves {
            guard let operation = recordOperation(index, zoneID: .defaultZone, resolveNow: true) else { continue }
            units.append(Unit(operations: [(operation, [index])]))
        }
        for index in deletes {
            let change = plan.changes[index]
            let record = Record(
                recordName: change.recordName ?? "", recordType: "", zoneID: .defaultZone,
                changeTag: change.baseChangeTag)
            units.append(Unit(operations: [(RecordOperation(.delete, record), [index])]))
        }
        await modify(units, zoneID: .defaultZone, database: .public)
    }

    /// The operation of a record create or update; `!share-url` fields whose share is saved in this run are
    /// left for later unless `resolveNow`, when every share has been saved already.
    mutating func recordOperation(_ index: Int, zoneID: ZoneID, resolveNow: Bool = false) -> RecordOperation? {
        let change = plan.changes[index]
        guard let planned = change.record else {
            fail([index], "the saved plan carries no record for this change; plan again")
            return nil
        }
        var fields: [String: FieldValue] = [:]
        fields.reserveCapacity(planned.fields.count)
        var later: [String: PlannedValue] = [:]
        for (name, value) in planned.fields {
            switch value {
            case .value(let v): fields[name] = v
            case .text(let s): fields[name] = .string(s)
            case .shareURL:
                guard let path = value.sharePath else { continue }
                if let url = shareURLs[path] {
                    fields[name] = .string(url)
                } else if resolveNow {
                    fail([index], "field '\(name)' needs the URL of share \(path), which was not saved")
                    return nil
                } else {
                    later[name] = value
                }
            }
        }
        if !later.isEmpty { deferred.append((index, later)) }
        let record = Record(
            recordName: change.recordName ?? "", recordType: planned.recordType, zoneID: zoneID, fields: fields,
            parent: planned.parent, changeTag: change.baseChangeTag)
        return RecordOperation(planned.operation, record)
    }

    func share(from planned: PlannedShare, zoneID: ZoneID) -> Share {
        Share(
            // An empty name lets the store name a new hierarchy share.
            recordName: planned.recordName ?? "", zoneID: zoneID,
            rootRecordName: planned.rootRecordName, title: planned.title, publicPermission: planned.publicPermission,
            ownerRecordName: owner,
            participants: planned.participants.map { planned in
                let p = filled(planned)
                return Participant(
                    participantID: p.participantID, userRecordName: p.userRecordName, email: p.email, name: p.name,
                    role: p.role, permission: p.permission, acceptance: p.acceptance)
            },
            changeTag: planned.baseChangeTag, shortGUID: planned.proposedShortGUID, url: planned.url)
    }

    /// One store call's operations, each with the changes it carries out.
    typealias Batch = [(RecordOperation, [Int])]

    /// Sends units in batches of at most 200 operations, never splitting a unit (a new share travels with its
    /// root record), and records each operation's outcome against its changes.
    mutating func modify(_ units: [Unit], zoneID: ZoneID, database: DatabaseScope) async {
        let batches = Self.batches(units)
        let results = await Self.send(
            batches, store: store, zoneID: zoneID, database: database, assetFiles: AssetFiles(plan.assetFiles ?? [:]),
            as: owner)
        absorb(batches, results, zoneID: zoneID, database: database)
    }

    /// Units packed into batches of at most 200 operations, in order.
    static func batches(_ units: [Unit]) -> [Batch] {
        var batches: [Batch] = []
        var current: Batch = []
        for unit in units {
            if !current.isEmpty && current.count + unit.operations.count > Applier.batchSize {
                batches.append(current)
                current = []
            }
            current += unit.operations
        }
        if !current.isEmpty { batches.append(current) }
        return batches
    }

    /// Sends the batches one after another; one result per batch sent. A call that throws (the store could
    /// not be reached, or refused the whole request) ends the sending: the later batches are not sent.
    static func send(
        _ batches: [Batch], store: any Store, zoneID: ZoneID, database: DatabaseScope, assetFiles: AssetFiles,
        as owner: UserRecordName
    ) async -> [Result<[RecordOutcome], any Error>] {
        await store.modifyRecords(
            batches.map { ZoneWrite($0.map(\.0), in: zoneID, database: database, assetFiles: assetFiles) }, as: owner)
    }

    /// Records the outcome of each sent batch against its changes.
    mutating func absorb(
        _ batches: [Batch], _ results: [Result<[RecordOutcome], any Error>], zoneID: ZoneID, database: DatabaseScope
    ) {
        // Whether this zone's tags are reported for the plan's maker (`AfterApply.reportedZones`).
        let keepsTags = database == .private && cachedZones.contains(zoneID.zoneName)
        for (batch, result) in zip(batches, results) {
            switch result {
            case .failure(let error):
                for (_, changeIndices) in batch { fail(changeIndices, "\(error)") }
                stopped = stopped ?? "\(error)"
            case .success(let outcomes):
                for ((_, changeIndices), outcome) in zip(batch, outcomes) {
                    switch outcome {
                    case .failed(_, let error):
                        fail(changeIndices, error.description)
                    case .saved(let record):
                        // Only records whose `!share-url` fields wait for a share need their new change tag.
                        if !deferred.isEmpty {
                            savedTags["\(zoneID.zoneName)/\(record.recordName)"] = record.changeTag
                        }
                        if keepsTags { written.saved(record.recordName, tag: record.changeTag, zone: zoneID.zoneName) }
                        succeed(changeIndices)
                    case .savedShare(let share):
                        if keepsTags { written.saved(share.recordName, tag: share.changeTag, zone: zoneID.zoneName) }
                        if let url = share.url {
                            shareURLs[SharePath(zoneName: zoneID.zoneName, rootRecordName: share.rootRecordName)] = url
                        }
                        succeed(changeIndices)
                    case .deleted(let name):
                        if keepsTags { written.deleted(name, zone: zoneID.zoneName) }
                        succeed(changeIndices)
                    }
                }
                if outcomes.count < batch.count {
                    for (_, changeIndices) in batch[outcomes.count...] {
                        fail(changeIndices, "the store answered no outcome for this operation")
                    }
                }
            }
            let where_ = database == .public ? "the public database" : zoneID.zoneName
            report("wrote \(batch.count) operation(s) in \(where_)")
        }
    }

    mutating func resolveDeferredShareURLs() async {
        guard !deferred.isEmpty else { return }
        defer { deferred = [] }
        var byZone: [String: [Unit]] = [:]
        var zoneOrder: [String] = []
        for (index, fields) in deferred {
            if hasFailed(index) { continue }
            let change = plan.changes[index]
            var resolved: [String: FieldValue] = [:]
            var missing: SharePath? = nil
            for (name, value) in fields {
                guard let path = value.sharePath else { continue }
                if let url = shareURLs[path] { resolved[name] = .string(url) } else { missing = path }
            }
            if let missing {
                reopen(index)
                fail([index], "saved, but share \(missing) was not saved, so its URL could not be written")
                continue
            }
            let record = Record(
                recordName: change.recordName ?? "", recordType: change.record?.recordType ?? "",
                zoneID: ZoneID(zoneName: change.zoneName), fields: resolved, parent: change.record?.parent,
                changeTag: savedTags["\(change.zoneName)/\(change.recordName ?? "")"])
            if byZone[change.zoneName] == nil { zoneOrder.append(change.zoneName) }
            byZone[change.zoneName, default: []].append(Unit(operations: [(RecordOperation(.update, record), [index])]))
            // The earlier save succeeded; this write decides the change's outcome.
            reopen(index)
        }
        // Asked to stop, the zones not started are left not attempted (each change was reopened above).
        for zone in zoneOrder where !halted {
            await modify(byZone[zone] ?? [], zoneID: ZoneID(zoneName: zone), database: .private)
        }
    }
}
