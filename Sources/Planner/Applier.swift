import Foundation
import Logging
import ShareKit

/// Applies a plan to a store: exactly the plan's changes, in CloudKit's batch size, reporting what was done
/// and what failed.
///
/// The order: zones are created first; then, zone by zone, record deletions (children first), records
/// (parents and `VALIDATE` targets first) with each new share in the same batch as its root record,
/// participant changes folded into their share, share deletions; then acceptances, as each participant; then fields holding the URL of
/// a share created in this apply; then public records; zone deletions last. Nothing is retried: a failed
/// change is reported, and planning again shows what is left.
public struct Applier: Sendable {
    public let store: any Store
    public let logger: Logger

    /// CloudKit's limit of operations a `records/modify` request may carry.
    public static let batchSize = CloudKitLimits.operationsPerRequest
    /// How many private zones are written at once (each zone's batches still go one at a time, in order).
    static let zonesInFlight = 3

    /// An applier over `store`, logging to `logger`.
    public init(store: any Store, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Applies `plan` as it is; each change is made against the change tag it was planned from.
    ///
    /// Store refusals do not throw: they are reported per change in the returned `ApplyReport`.
    /// - Throws: only when the plan was made against another store.
    public func apply(_ plan: Plan, progress: (@Sendable (ApplyProgress) -> Void)? = nil) async throws
        -> ApplyReport
    {
        guard plan.storeName == store.displayName else {
            throw PlannerError.wrongStore(planned: plan.storeName, actual: store.displayName)
        }
        var run = ApplyRun(plan: plan, store: store, logger: logger, progress: progress)
        await run.execute()
        return run.report
    }

    /// Applies a saved plan: first checks that nothing it was computed from has changed, and refuses,
    /// changing nothing, if anything has.
    /// - Throws: `PlannerError.stalePlan` naming what changed; `PlannerError.wrongStore`.
    public func applySaved(_ plan: Plan, progress: (@Sendable (ApplyProgress) -> Void)? = nil) async throws
        -> ApplyReport
    {
        try await verify(plan)
        return try await apply(plan, progress: progress)
    }

    /// Signs in, creating nothing, the users a plan read from another process found (over `http:` a new
    /// process holds no tokens for them yet).
    /// - Throws: `PlannerError.stalePlan` when the store's users changed since the plan.
    func signInKnownUsers(_ plan: Plan) async throws {
        var changed: [String] = []
        // A store that acts only as its signed-in user (cloudkit:) signs in nobody else: only the owner counts.
        let users = store.capabilities.actsAsAnyUser ? plan.users + [plan.owner] : [plan.owner]
        for user in users {
            guard let email = user.email, !email.isEmpty else { continue }
            let found: User?
            do {
                found = try await store.signInExisting(email: email)
            } catch let error as ShareError {
                throw PlannerError.storeFailed(operation: "signing in as \(user.handle)", subject: email, error)
            }
            if (found?.recordName ?? "") != user.recordName {
                changed.append(
                    user.isNew
                        ? "user \(user.handle) (\(email)) was created" : "user \(user.handle) (\(email)) is no longer the same")
            }
        }
        if !changed.isEmpty { throw PlannerError.stalePlan(changes: Array(Set(changed)).sorted()) }
    }

    /// Checks that the store still holds the state `plan` was computed from: its users, zones, records and
    /// shares.
    /// - Throws: `PlannerError.stalePlan` naming every user, zone, record and share that changed.
    public func verify(_ plan: Plan) async throws {
        guard plan.storeName == store.displayName else {
            throw PlannerError.wrongStore(planned: plan.storeName, actual: store.displayName)
        }
        try await signInKnownUsers(plan)
        let reader = LiveStateReader(store: store, owner: plan.owner.recordName, logger: logger)
        let live = try await reader.read(
            zoneNames: plan.basis.zones.map(\.zoneName), publicRecordNames: plan.basis.publicRecordNames)
        var differences: [String] = []
        for zone in plan.basis.zones {
            let liveZone = live.zones[zone.zoneName]
            if zone.exists != (liveZone != nil) {
                differences.append("zone \(zone.zoneName) was \(zone.exists ? "deleted" : "created")")
                continue
            }
            let now = liveZone?.tags ?? [:]
            for name in Set(zone.tags.keys).union(now.keys).sorted() {
                let what = Self.describe(name: name, zone: zone.zoneName, live: liveZone)
                switch (zone.tags[name], now[name]) {
                case (nil, _?): differences.append("\(what) was created")
                case (_?, nil): differences.append("\(what) was deleted")
                case (let before?, let after?) where before != after:
                    differences.append("\(what) changed (change tag \(before) → \(after))")
                default: break
                }
            }
        }
        for name in plan.basis.publicRecordNames {
            let what = "record (public)/\(name)"
            switch (plan.basis.publicTags[name], live.publicRecords[name]?.changeTag ?? live.publicRecords[name].map { _ in "" }) {
            case (nil, _?): differences.append("\(what) was created")
            case (_?, nil): differences.append("\(what) was deleted")
            case (let before?, let after?) where before != after:
                differences.append("\(what) changed (change tag \(before) → \(after))")
            default: break
            }
        }
        if !differences.isEmpty { throw PlannerError.stalePlan(changes: differences) }
    }

    private static func describe(name: String, zone: String, live: LiveZone?) -> String {
        if name == zoneShareRecordName { return "share \(zone)" }
        if let share = live?.shares[name] {
            return share.rootRecordName.map { "share \(zone)/\($0)" } ?? "share \(zone)"
        }
        return "record \(zone)/\(name)"
    }
}

/// One run of an apply: the plan, what has been done, and what failed.
struct ApplyRun {
    /// The plan; apply fills in the record names of the users it creates.
    var plan: Plan
    let store: any Store
    let logger: Logger
    let progress: (@Sendable (ApplyProgress) -> Void)?
    var owner: UserRecordName { plan.owner.recordName }

    /// Outcome per change index: nil while pending.
    var outcome: [Int: String?] = [:]
    /// Share URLs by share path (`FamilyLists`, `Trips/italy`), from the plan and from saved shares.
    var shareURLs: [String: String] = [:]
    /// Change tags of records saved in this run, by `zone/record`.
    var savedTags: [String: String] = [:]
    /// Zones whose creation failed.
    var failedZones: Set<String> = []
    /// Record changes whose `!share-url` fields wait for a share saved in this run.
    var deferred: [(index: Int, fields: [String: PlannedValue])] = []
    /// Set when a store call could not be sent or answered: nothing more is sent, and what was not sent is
    /// reported as not attempted.
    var stopped: String?

    init(plan: Plan, store: any Store, logger: Logger, progress: (@Sendable (ApplyProgress) -> Void)?) {
        self.plan = plan
        self.store = store
        self.logger = logger
        self.progress = progress
        for change in plan.changes {
            if let share = change.share, let url = share.url { shareURLs[share.path] = url }
        }
    }

    var report: ApplyReport {
        var report = ApplyReport(stopped: stopped)
        for (index, change) in plan.changes.enumerated() {
            guard let result = outcome[index] else {
                report.failures.append(
                    .init(
                        action: change.action, kind: change.kind, address: change.address,
                        reason: ApplyReport.notAttemptedReason))
                continue
            }
            if let reason = result {
                report.failures.append(
                    .init(action: change.action, kind: change.kind, address: change.address, reason: reason))
            } else {
                report.applied.append(.init(action: change.action, kind: change.kind, address: change.address))
            }
        }
        return report
    }

    // MARK: - Bookkeeping

    mutating func succeed(_ indices: [Int]) {
        for index in indices where outcome[index] == nil { outcome[index] = .some(nil) }
    }

    mutating func fail(_ indices: [Int], _ reason: String) {
        for index in indices {
            if case .some(.some) = outcome[index] { continue }
            outcome[index] = .some(reason)
            // The report carries the failure; the command line prints it once.
            logger.debug("\(plan.changes[index].address): \(reason)")
        }
    }

    func report(_ message: String) {
        progress?(ApplyProgress(completed: outcome.count, total: plan.changes.count, message: message))
    }

    /// The indices of the changes of `kind` whose action is `action` (or, with `not`, any other action),
    /// in `database` when given. Reads the changes in place: a predicate taking each change would copy all
    /// 100,000 of them, several times an apply.
    func indices(
        _ kind: PlannedChange.Kind, _ action: PlannedChange.Action, not: Bool = false, in database: DatabaseScope? = nil
    ) -> [Int] {
        var found: [Int] = []
        for index in plan.changes.indices where plan.changes[index].kind == kind {
            guard (plan.changes[index].action == action) != not else { continue }
            if let database, plan.changes[index].database != database { continue }
            found.append(index)
        }
        return found
    }

    // MARK: - The run

    mutating func execute() async {
        if let failure = await signInNewUsers() {
            fail(Array(plan.changes.indices), failure)
            return
        }
        await modifyZones(.create)
        if stopped != nil { return }
        // One pass groups the private changes by zone: scanning every change for every zone would cost
        // zones × changes (10 million steps for 100,000 records in 100 zones).
        var zoneOrder: [String] = []
        var changesByZone: [String: [Int]] = [:]
        for index in plan.changes.indices where plan.changes[index].database == .private && plan.changes[index].kind != .zone {
            let zoneName = plan.changes[index].zoneName
            if changesByZone[zoneName] == nil { zoneOrder.append(zoneName) }
            changesByZone[zoneName, default: []].append(index)
        }
        await applyZones(zoneOrder, changesByZone)
        // After a call that could not be sent, nothing more is: the rest is reported as not attempted.
        if stopped == nil { await acceptShares() }
        if stopped == nil { await resolveDeferredShareURLs() }
        if stopped == nil { await applyPublicRecords() }
        if stopped == nil { await modifyZones(.delete) }
    }

    /// Signs in the users the store does not have yet, creating them, a few at a time, and writes their
    /// record names into the plan: planning creates no users, so apply does, before anything that names
    /// them. Nil when every user is signed in, otherwise why not.
    mutating func signInNewUsers() async -> String? {
        // Only a store that acts as any user creates users; on cloudkit: the others are waited for (the plan
        // lists them), and the owner is the signed-in user.
        guard store.capabilities.actsAsAnyUser else { return nil }
        let newUsers = plan.users.filter(\.isNew) + (plan.owner.isNew && !plan.users.contains { $0.handle == plan.owner.handle } ? [plan.owner] : [])
        guard !newUsers.isEmpty else { return nil }
        let store = self.store
        var recordNames: [String: UserRecordName] = [:]
        var failure: String?
        var pending = newUsers[...]
        await withTaskGroup(of: (PlannedUser, Result<User, any Error>).self) { group in
            var inFlight = 0
            while true {
                while inFlight < Applier.zonesInFlight, let user = pending.popFirst() {
                    group.addTask {
                        do {
                            return (user, .success(try await store.signIn(email: user.email ?? "", name: user.name)))
                        } catch {
                            return (user, .failure(error))
                        }
                    }
                    inFlight += 1
                }
                guard let (user, result) = await group.next() else { break }
                inFlight -= 1
                switch result {
                case .success(let signedIn): recordNames[user.handle] = signedIn.recordName
                case .failure(let error):
                    failure = failure ?? "signing in \(user.handle) (\(user.email ?? "")) failed: \(error)"
                }
            }
        }
        if let failure { return failure }
        if plan.owner.isNew { plan.owner.recordName = recordNames[plan.owner.handle] ?? "" }
        for index in plan.users.indices where plan.users[index].isNew {
            plan.users[index].recordName = recordNames[plan.users[index].handle] ?? ""
        }
        var byEmail: [String: UserRecordName] = [:]
        for user in newUsers {
            if let email = user.email, let recordName = recordNames[user.handle] {
                byEmail[StableName.normalizedEmail(email)] = recordName
            }
        }
        func fill(_ participant: inout PlannedParticipant) {
            guard participant.userRecordName.isEmpty, let email = participant.email,
                let recordName = byEmail[StableName.normalizedEmail(email)]
            else { return }
            participant.userRecordName = recordName
        }
        for index in plan.changes.indices where plan.changes[index].kind != .record {
            if plan.changes[index].participant != nil { fill(&plan.changes[index].participant!) }
            if let count = plan.changes[index].share?.participants.count {
                for position in 0..<count { fill(&plan.changes[index].share!.participants[position]) }
            }
        }
        return nil
    }

    /// Creates (or deletes) the plan's zones in one `zones/modify`. A zone whose creation failed is
    /// remembered, so that its record and share changes are reported as not made rather than attempted.
    mutating func modifyZones(_ kind: ZoneOperation.Kind) async {
        let changes = indices(.zone, kind == .create ? .create : .delete)
        guard !changes.isEmpty else { return }
        let operations = changes.map { ZoneOperation(kind, ZoneID(zoneName: plan.changes[$0].zoneName)) }
        var failed: [Int] = []
        do {
            let results = try await store.modifyZones(operations, in: .private, as: owner)
            for (index, result) in zip(changes, results) {
                switch result {
                case .success: succeed([index])
                case .failure(let error):
                    failed.append(index)
                    fail([index], error.description)
                }
            }
        } catch {
            failed = changes
            fail(changes, "\(error)")
            stopped = "\(error)"
        }
        if kind == .create {
            for index in failed { failedZones.insert(plan.changes[index].zoneName) }
        }
        report("\(kind == .create ? "created" : "deleted") \(changes.count) zone(s)")
    }

    /// One operation and the changes it carries out.
    struct Unit {
        var operations: [(RecordOperation, [Int])]
    }

    /// The private zones' writes, several zones at a time: zones are independent, so while the store writes
    /// one zone's batch the next zone's batches are built, and over `http:` one request is encoded while the
    /// server answers another. Within a zone, batches go in order (parents before children), one at a time.
    mutating func applyZones(_ zoneOrder: [String], _ changesByZone: [String: [Int]]) async {
        let store = self.store
        let owner = self.owner
        var pending = zoneOrder[...]
        await withTaskGroup(of: (ZoneID, [Batch], [Result<[RecordOutcome], any Error>]).self) { group in
            var inFlight = 0
            while true {
                while inFlight < Applier.zonesInFlight, stopped == nil, let zone = pending.popFirst() {
                    let zoneID = ZoneID(zoneName: zone)
                    guard let units = zoneUnits(zone, inZone: changesByZone[zone] ?? []) else { continue }
                    let batches = Self.batches(units)
                    group.addTask {
                        (zoneID, batches, await Self.send(batches, store: store, zoneID: zoneID, database: .private, as: owner))
                    }
                    inFlight += 1
                }
                guard let (zoneID, batches, results) = await group.next() else { break }
                inFlight -= 1
                absorb(batches, results, zoneID: zoneID, database: .private)
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
        var sharePaths: [String] = []
        var shareChanges: [String: [Int]] = [:]
        for index in inZone where plan.changes[index].kind == .share || plan.changes[index].kind == .participant {
            let change = plan.changes[index]
            guard let share = change.share, !(change.kind == .share && change.action == .delete) else { continue }
            if shareChanges[share.path] == nil { sharePaths.append(share.path) }
            shareChanges[share.path, default: []].append(index)
        }
        for path in sharePaths {
            guard let members = shareChanges[path], let planned = plan.changes[members[0]].share else { continue }
            let needsSave = members.contains { index in
                let change = plan.changes[index]
                return change.kind == .share || change.action != .update
                    || change.attributes.contains { $0.name != "accepted" }
            }
            guard needsSave else { continue }
            // Acceptances are done later, as each participant; the share save only adds them.
            let saved = members.filter { index in
                !(plan.changes[index].participant?.accept ?? false)
                    || plan.changes[index].attributes.contains { $0.name != "accepted" }
            }
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
        var later: [String: PlannedValue] = [:]
        for (name, value) in planned.fields {
            switch value {
            case .value(let v): fields[name] = v
            case .text(let s): fields[name] = .string(s)
            case .shareURL(let zone, let root):
                let path = root.map { "\(zone)/\($0)" } ?? zone
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
            participants: planned.participants.map { p in
                Participant(
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
        let results = await Self.send(batches, store: store, zoneID: zoneID, database: database, as: owner)
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
        _ batches: [Batch], store: any Store, zoneID: ZoneID, database: DatabaseScope, as owner: UserRecordName
    ) async -> [Result<[RecordOutcome], any Error>] {
        var results: [Result<[RecordOutcome], any Error>] = []
        for batch in batches {
            do {
                results.append(
                    .success(
                        try await store.modifyRecords(
                            batch.map(\.0), in: zoneID, database: database, atomic: false, as: owner)))
            } catch {
                results.append(.failure(error))
                break
            }
        }
        return results
    }

    /// Records the outcome of each sent batch against its changes.
    mutating func absorb(
        _ batches: [Batch], _ results: [Result<[RecordOutcome], any Error>], zoneID: ZoneID, database: DatabaseScope
    ) {
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
                        succeed(changeIndices)
                    case .savedShare(let share):
                        if let url = share.url {
                            shareURLs[share.rootRecordName.map { "\(zoneID.zoneName)/\($0)" } ?? zoneID.zoneName] = url
                        }
                        succeed(changeIndices)
                    case .deleted:
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

    /// Accepts shares as their participants, all of one participant's shares in one call (one
    /// `records/accept` request, one transaction in the SQLite store).
    mutating func acceptShares() async {
        var users: [UserRecordName] = []
        var byUser: [UserRecordName: [(index: Int, url: String)]] = [:]
        for index in plan.changes.indices where plan.changes[index].kind == .participant {
            let change = plan.changes[index]
            guard change.action != .delete, let participant = change.participant,
                participant.accept, let share = change.share
            else { continue }
            if case .some(.some) = outcome[index] { continue }
            guard let url = shareURLs[share.path] else {
                fail([index], "share \(share.path) has no URL to accept, so \(participant.handle) could not accept it")
                continue
            }
            if byUser[participant.userRecordName] == nil { users.append(participant.userRecordName) }
            byUser[participant.userRecordName, default: []].append((index, url))
        }
        // Each user's shares in one call; a few users at a time, as they are independent (over `http:` each
        // user's requests carry that user's own token).
        typealias Chunk = [(index: Int, url: String)]
        var chunks: [(UserRecordName, Chunk)] = []
        for user in users {
            let accepts = byUser[user] ?? []
            for start in stride(from: 0, to: accepts.count, by: Applier.batchSize) {
                chunks.append((user, Array(accepts[start..<min(start + Applier.batchSize, accepts.count)])))
            }
        }
        let store = self.store
        var pending = chunks[...]
        await withTaskGroup(of: (UserRecordName, Chunk, Result<[Result<ShareMetadata, ShareError>], any Error>).self) {
            group in
            var inFlight = 0
            while true {
                while inFlight < Applier.zonesInFlight, stopped == nil, let (user, chunk) = pending.popFirst() {
                    group.addTask {
                        do {
                            return (user, chunk, .success(try await store.acceptShares(urls: chunk.map(\.url), as: user)))
                        } catch {
                            return (user, chunk, .failure(error))
                        }
                    }
                    inFlight += 1
                }
                guard let (user, chunk, outcome) = await group.next() else { break }
                inFlight -= 1
                switch outcome {
                case .failure(let error):
                    for (index, _) in chunk { fail([index], acceptFailure(index, "\(error)")) }
                    stopped = stopped ?? "\(error)"
                case .success(let results):
                    for (position, (index, _)) in chunk.enumerated() {
                        switch position < results.count ? results[position] : nil {
                        case .success?: succeed([index])
                        case .failure(let error)?: fail([index], acceptFailure(index, error.description))
                        case nil: fail([index], acceptFailure(index, "the store answered no result"))
                        }
                    }
                }
                let handle = plan.changes[chunk[0].index].participant?.handle ?? user
                report("\(handle) accepted \(chunk.count) share(s)")
            }
        }
    }

    private func acceptFailure(_ index: Int, _ reason: String) -> String {
        let change = plan.changes[index]
        return "accepting share \(change.share?.path ?? "?") as \(change.participant?.handle ?? "?") failed: \(reason)"
    }

    mutating func resolveDeferredShareURLs() async {
        guard !deferred.isEmpty else { return }
        var byZone: [String: [Unit]] = [:]
        var zoneOrder: [String] = []
        for (index, fields) in deferred {
            if case .some(.some) = outcome[index] { continue }
            let change = plan.changes[index]
            var resolved: [String: FieldValue] = [:]
            var missing: String? = nil
            for (name, value) in fields {
                guard case .shareURL(let zone, let root) = value else { continue }
                let path = root.map { "\(zone)/\($0)" } ?? zone
                if let url = shareURLs[path] { resolved[name] = .string(url) } else { missing = path }
            }
            if let missing {
                outcome[index] = nil
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
            outcome[index] = nil
        }
        for zone in zoneOrder {
            await modify(byZone[zone] ?? [], zoneID: ZoneID(zoneName: zone), database: .private)
        }
    }
}
