import Foundation
import Logging
import PlanModel
import ShareKit

/// One run of an apply: the plan, what has been done, and what failed.
struct ApplyRun {
    /// The plan; apply fills in the record names of the users it creates.
    var plan: Plan
    let store: any Store
    let logger: Logger
    let progress: (@Sendable (ApplyProgress) -> Void)?
    /// The most store calls under way at once (`Applier.parallelism`).
    let parallelism: Int
    var owner: UserRecordName { plan.owner.recordName }
    /// Zones written at once, and users signed in or accepting at once (`Parallelism.calls`).
    var zonesInFlight: Int {
        Parallelism.calls(parallelism, for: store, localLimit: Applier.localZonesInFlight)
    }
    var usersInFlight: Int {
        Parallelism.calls(parallelism, for: store, localLimit: Applier.localUsersInFlight)
    }

    /// What became of a change.
    enum Outcome: Sendable, Hashable {
        case applied
        case failed(reason: String)
    }

    /// Outcome per change, by its index in the plan: nil while pending.
    private(set) var outcomes: [Outcome?]
    /// How many changes have an outcome.
    private(set) var completed = 0
    /// `completed` as of the last report, for the wait reports of calls in flight (`waitReporter`).
    let completedSoFar = CompletedChanges()
    /// Share URLs by share, from the plan and from saved shares.
    var shareURLs: [SharePath: String] = [:]
    /// Change tags of records saved in this run, by `zone/record`.
    var savedTags: [String: String] = [:]
    /// Zones whose creation failed.
    var failedZones: Set<String> = []
    /// Record names of the users this run signed in, by normalized email address (`filled`).
    var newUserRecordNames: [String: UserRecordName] = [:]
    /// The participant changes whose acceptance the store answered (`reopenHalfDone`).
    var acceptancesAnswered: Set<Int> = []
    /// Record changes whose `!share-url` fields wait for a share saved in this run.
    var deferred: [(index: Int, fields: [String: PlannedValue])] = []
    /// Set when a store call could not be sent or answered: nothing more is sent, and what was not sent is
    /// reported as not attempted.
    var stopped: String?
    /// The request from outside that the run stop (a first Ctrl-C), bound where the run began.
    let stopRequest = StopRequest.current
    /// Whether nothing more is to start: a call could not be sent or answered, or the run was asked to stop.
    var halted: Bool { stopped != nil || stopRequest?.isRequested == true }
    /// The zones whose writes the run reports (`AfterApply.reportedZones`), and what it wrote in them.
    let cachedZones: Set<String>
    var written = WrittenTags()

    init(
        plan: Plan, store: any Store, logger: Logger, progress: (@Sendable (ApplyProgress) -> Void)?,
        parallelism: Int = Parallelism.default
    ) {
        self.plan = plan
        self.store = store
        self.logger = logger
        self.progress = progress
        self.parallelism = parallelism
        self.outcomes = Array(repeating: nil, count: plan.changes.count)
        // A store that cannot read a zone's change tags without its records (`readsZoneTags`) leaves the
        // reader of the writes nothing to compare them with: none are reported.
        cachedZones = store.capabilities.readsZoneTags ? plan.afterApply[plan.owner.handle]?.reportedZones ?? [] : []
        for change in plan.changes {
            if let share = change.share, let url = share.url { shareURLs[share.path] = url }
        }
    }

    var report: ApplyReport {
        var report = ApplyReport(stopped: stopped)
        if !cachedZones.isEmpty, stopped == nil {
            report.writes.parts.append(
                PartWrites(
                    ownerHandle: plan.owner.handle, owner: owner, basis: plan.basis.zones, zones: cachedZones,
                    tags: written, unfinished: unfinishedZones(), signedIn: newUserRecordNames))
        }
        report.applied.reserveCapacity(completed)
        // By index: the changes are read in place, not copied one by one (10,000 of them at the end of an apply).
        for index in plan.changes.indices {
            let (action, kind, address) = (
                plan.changes[index].action, plan.changes[index].kind, plan.changes[index].address
            )
            switch outcomes[index] {
            case nil:
                report.failures.append(
                    .init(action: action, kind: kind, address: address, reason: ApplyReport.notAttemptedReason))
            case .failed(let reason):
                report.failures.append(.init(action: action, kind: kind, address: address, reason: reason))
            case .applied:
                report.applied.append(.init(action: action, kind: kind, address: address))
            }
        }
        return report
    }

    /// The private zones with a change this run did not make.
    private func unfinishedZones() -> Set<String> {
        var zones: Set<String> = []
        // By index: the changes are read in place, not copied one by one.
        for index in plan.changes.indices
        where plan.changes[index].database == .private && plan.changes[index].kind != .subscription
            && outcomes[index] != .applied
        {
            zones.insert(plan.changes[index].zoneName)
        }
        return zones
    }

    // MARK: - Bookkeeping

    private mutating func set(_ index: Int, _ outcome: Outcome?) {
        if outcomes[index] == nil, outcome != nil { completed += 1 }
        if outcomes[index] != nil, outcome == nil { completed -= 1 }
        outcomes[index] = outcome
    }

    /// Marks changes applied, unless they already have an outcome.
    mutating func succeed(_ indices: [Int]) {
        for index in indices where outcomes[index] == nil { set(index, .applied) }
    }

    /// Marks changes failed, unless they already failed (the first reason stands).
    mutating func fail(_ indices: [Int], _ reason: String) {
        for index in indices {
            if case .failed = outcomes[index] { continue }
            set(index, .failed(reason: reason))
            // The report carries the failure; the command line prints it once.
            logger.debug("\(plan.changes[index].address): \(reason)")
        }
    }

    /// Leaves a change without an outcome again: a later write decides it.
    mutating func reopen(_ index: Int) { set(index, nil) }

    /// Whether a change already failed.
    func hasFailed(_ index: Int) -> Bool {
        if case .failed = outcomes[index] { return true }
        return false
    }

    func report(_ message: String) {
        completedSoFar.value = completed
        progress?(ApplyProgress(completed: completed, total: plan.changes.count, message: message))
    }

    /// What tells `progress` of each wait of a store call (`StoreRetryListener`), with the changes done so far.
    func waitReporter(_ progress: @escaping @Sendable (ApplyProgress) -> Void) -> @Sendable (StoreRetry) -> Void {
        let (done, total) = (completedSoFar, plan.changes.count)
        return { wait in
            progress(ApplyProgress(completed: done.value, total: total, message: wait.description, waiting: wait))
        }
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
        await executeUntilHalted()
        if halted { reopenHalfDone() }
        // Asked to stop part-way: what was not started is reported as not attempted, for the next apply.
        if stopped == nil, stopRequest?.isRequested == true, outcomes.contains(where: { $0 == nil }) {
            stopped = StopRequest.reason
        }
    }

    private mutating func executeUntilHalted() async {
        // One pass groups the private changes by zone: scanning every change for every zone would cost
        // zones × changes (10 million steps for 100,000 records in 100 zones).
        var zoneOrder: [String] = []
        var changesByZone: [String: [Int]] = [:]
        for index in plan.changes.indices
        where plan.changes[index].database == .private && plan.changes[index].kind != .zone
            && plan.changes[index].kind != .subscription
        {
            let zoneName = plan.changes[index].zoneName
            if changesByZone[zoneName] == nil { zoneOrder.append(zoneName) }
            changesByZone[zoneName, default: []].append(index)
        }
        // The owner's calls at once: the schema beside the zones, then a write a zone.
        let ownerCalls = min(zonesInFlight, max(2, zoneOrder.count))
        // The new users sign in before anything names them; over `http:` those that do not fit in the owner's
        // request sign in while the zones are written (`newUsersToSignIn`), as their shares name them by email
        // address until then.
        let (first, later) = newUsersToSignIn()
        if let failure = await signInNewUsers(first, ownerCalls: ownerCalls) {
            // Nothing was written: every change is left for the next apply, which signs them in again.
            stopped = failure
            return
        }
        // Asked to stop while the users signed in: nothing more is written (they exist now; the next plan finds
        // them).
        if halted { return }
        let signingIn = later.isEmpty ? nil : startSigningIn(later)
        // The users the store has that the run acts as, signed in again where this process has no sign-in for
        // them (a plan from the cache file signed in the owner alone), while the zones are written.
        let readying = startReadyingUsersActedAs()
        if let failure = await setUserDiscoverability() {
            fail(Array(plan.changes.indices), failure)
            return
        }
        if await extendSchemaAndCreateZones() != nil {
            // Nothing but the zones was written: every other change is left for the next apply, which plans the
            // schema again.
            fail(plan.changes.indices.filter { outcomes[$0] == nil }, ApplyReport.notAttemptedReason)
            return
        }
        if halted { return }
        await applyZones(zoneOrder, changesByZone)
        if let signingIn, let failure = adopt(await signingIn.value, of: later) {
            // Their shares are saved; they cannot accept them, nor anything else be done as them.
            stopped = stopped ?? failure
        }
        if let readying, let failure = await readying.value {
            // Nothing can be done as them: their acceptances and subscriptions are left for the next apply.
            stopped = stopped ?? failure
        }
        // After a call that could not be sent, nothing more is: the rest is reported as not attempted.
        if !halted { await acceptShares() }
        if !halted { await resolveDeferredShareURLs() }
        if !halted { await applyPublicRecords() }
        if !halted { await applySubscriptions() }
        if !halted { await rearmSubscriptions() }
        if !halted { await modifyZones(.delete) }
    }

    /// Sets the phone number and discoverability of the users whose recipe entry says them (`phone:`,
    /// `discoverable:`), where the store acts as any user (on `cloudkit:` each user chooses them in an app).
    /// Nil when done, otherwise why not.
    func setUserDiscoverability() async -> String? {
        guard store.capabilities.actsAsAnyUser else { return nil }
        var seen = Set<String>()
        for user in [plan.owner] + plan.users
        where (user.phone != nil || user.discoverable != nil) && !user.isNew && seen.insert(user.handle).inserted {
            do {
                try await store.setDiscoverability(
                    UserDiscoverability(phone: user.phone, discoverable: user.discoverable ?? false),
                    as: user.recordName)
            } catch {
                return "setting the phone number and discoverability of \(user.handle) failed: \(error)"
            }
        }
        return nil
    }

    /// A planned participant with the record name of a user this run signed in: kept beside the plan rather
    /// than written into its changes, whose array the plan's rendering shares, so that writing one change
    /// copied all of them (about 50 MB at 100,000 records, the apply's peak memory).
    func filled(_ participant: PlannedParticipant) -> PlannedParticipant {
        guard participant.userRecordName.isEmpty, !newUserRecordNames.isEmpty, let email = participant.email,
            let recordName = newUserRecordNames[EmailAddress.normalized(email)]
        else { return participant }
        var filled = participant
        filled.userRecordName = recordName
        return filled
    }

    /// Adds the plan's schema changes to development's schema, before any record needs them, and creates the
    /// plan's zones. Over Web Services the two requests go together, one round trip rather than two (a
    /// schema the plan read has no conflict left; one that fails now leaves the zones, empty, for the next
    /// apply to fill). Nil when done, otherwise why the schema was not extended: then nothing else is
    /// attempted.
    mutating func extendSchemaAndCreateZones() async -> String? {
        guard let schema = plan.schema, !schema.changes.isEmpty else {
            await modifyZones(.create)
            return nil
        }
        let (store, owner, additions) = (self.store, self.owner, schema.additions)
        guard !store.capabilities.batchesInOneTransaction else {
            if let failure = await Self.extendSchema(additions, store: store, owner: owner) {
                stopped = failure
                return failure
            }
            await modifyZones(.create)
            return nil
        }
        async let extending = Self.extendSchema(additions, store: store, owner: owner)
        await modifyZones(.create)
        if let failure = await extending {
            stopped = stopped ?? failure
            return failure
        }
        return nil
    }

    /// Nil when the store took `additions`, otherwise why not.
    private static func extendSchema(_ additions: Schema, store: any Store, owner: UserRecordName) async -> String? {
        do {
            _ = try await store.extendSchema(additions, as: owner)
            return nil
        } catch {
            return "extending the schema failed: \(error)"
        }
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
}
