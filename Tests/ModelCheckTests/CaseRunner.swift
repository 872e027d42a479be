import Applier
import CloudKitWire
import Foundation
import Logging
import PlanModel
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport

/// What one run of a case did: the first broken promise, and what a person needs to replay it.
struct CaseReport: Sendable {
    var violation: Violation?
    /// Lane steps of the actions that ran (skipped ones left out), with a comment for what no step replays.
    var laneSteps: [String] = []
    /// The recipe after each edit, with the number of the step that made it.
    var versions: [(step: Int, yaml: String)] = []
    var skipped = 0
    /// Direct operations run, and how many of them the rules refused (both must stay well above zero, or the
    /// access checks test nothing).
    var directOperations = 0
    var refusals = 0
    var laneJudgements = 0
    /// Operations asked about a zone or record the caller may not see, each beside the same one about what
    /// does not exist (`CaseRun+Oracle.swift`).
    var oracleProbes = 0
    /// Applies stopped part-way (`CheckAction.stoppedApply`), and how many of them stopped before the end (the
    /// others ended first): the second must stay well above zero, or the stops test nothing.
    var stopsAsked = 0
    var stopsMidway = 0
}

/// Runs a case against the embedded SQLite store and a `sharelane serve` over HTTP, checking the
/// invariants after every action. Both stores are wiped before each case.
struct CaseRunner: Sendable {
    let sqlite: SQLiteStore
    let serveBacking: SQLiteStore
    let serveURL: String
    let apiToken: String
    let bugs: KnownBugs
    /// Where each side's incremental plans keep their cache files (removed before each case).
    let cacheDirectory: URL
    /// The bad network serve plays while its side applies; nil for a good network throughout.
    var faults: CheckFaults? = nil
    /// The clock serve's throttle counts by and the client waits out `retryAfter` on: whole seconds of
    /// waiting cost nothing.
    var clock = MovableClock()
    var tally = FaultTally()
    static let logger = Logger(label: "sharelane.modelcheck") { _ in SwiftLogNoOpLogHandler() }

    func run(_ checkCase: CheckCase) async throws -> CaseReport {
        for world in CheckCase.worlds {
            try await sqlite.worlds.sqliteStore(for: world).reset()
            try await serveBacking.worlds.sqliteStore(for: world).reset()
        }
        // The case runs in one container's development; a bystander's data waits in every other world of
        // both sides, and must be there, unchanged and alone, when the case ends.
        let world = checkCase.world
        let sqlite = try self.sqlite.worlds.sqliteStore(for: world)
        let serveBacking = try self.serveBacking.worlds.sqliteStore(for: world)
        var bystanders: [String: Bystander] = [:]
        for (label, side) in [("sqlite", self.sqlite), ("serve", self.serveBacking)] {
            for other in CheckCase.worlds where other != world {
                bystanders["\(label) \(other)"] = try await Bystander.seed(try side.worlds.sqliteStore(for: other))
            }
        }
        // A case that broke a promise may have left the network bad.
        try await faults?.off()
        // Short backoffs, `retryAfter` waited out on `clock`; over a bad network three attempts a request, so
        // that some applies meet a request that cannot get through and must stop cleanly, then converge.
        let (serveURL, apiToken, retryClock) = (self.serveURL, self.apiToken, clock.retryClock)
        let maxAttempts = faults == nil ? 8 : 3
        let makeServeStore: @Sendable () -> WebServicesStore = {
            WebServicesStore(
                endpoint: .emulator(
                    url: serveURL, apiToken: apiToken, container: world.container,
                    environment: world.environment.rawValue),
                retryPolicy: RetryPolicy(maxAttempts: maxAttempts, baseDelay: 0.01, maxDelay: 0.05),
                retryClock: retryClock,
                logger: Self.logger)
        }
        let http = makeServeStore()
        CheckAssets.write(into: cacheDirectory)
        let caches = ["sqlite", "serve"].map { cacheDirectory.appendingPathComponent("plan-cache-\($0).json") }
        for file in caches { try? FileManager.default.removeItem(at: file) }
        let run = CaseRun(
            sides: [
                StoreSide(label: "sqlite", store: sqlite, backing: sqlite),
                StoreSide(label: "serve", store: http, backing: serveBacking),
            ], spec: checkCase.recipe, bugs: bugs)
        run.caches = caches.map { PlanCache(file: $0) }
        run.makeServeStore = makeServeStore
        run.faults = faults
        run.tally = tally
        run.caseSeed = checkCase.seed
        do {
            run.recipe = try Self.load(checkCase.recipe.yaml())
        } catch {
            run.report.violation = Violation(
                invariant: "generated-recipe-invalid", detail: "\(error)\n\(checkCase.recipe.yaml())", step: -1)
            return run.report
        }
        for (index, action) in checkCase.actions.enumerated() {
            do {
                try await run.perform(action, step: index)
                try await run.compareIncrementalPlans(step: index)
            } catch let violation as Violation {
                run.report.violation = violation
                if case .mutate = action {
                    run.report.laneSteps.append("# the apply above breaks the promise (\(violation.invariant))")
                } else {
                    run.report.laneSteps.append("# the next step breaks the promise (\(violation.invariant)):")
                    run.report.laneSteps.append(
                        action.laneStep(checkCase.recipe).replacingOccurrences(
                            of: "type: \(CheckAction.replayType)", with: "type: \(run.lastSaveType)"))
                }
                if ["apply-then-plan", "export-then-plan"].contains(violation.invariant) {
                    run.report.laneSteps.append("plan")
                }
                return run.report
            } catch {
                run.report.violation = Violation(invariant: "threw", detail: "\(action): \(error)", step: index)
                return run.report
            }
        }
        do {
            try await run.compareFullViews(step: checkCase.actions.count - 1)
            try await checkWorldsApart(world, bystanders: bystanders, step: checkCase.actions.count - 1)
        } catch let violation as Violation {
            run.report.violation = violation
        }
        return run.report
    }

    /// Nothing the case did crossed into another container or environment, and nothing of theirs into the
    /// case's: each other world holds its bystander alone, as seeded, and the case's world has no bystander.
    func checkWorldsApart(_ world: StoreWorld, bystanders: [String: Bystander], step: Int) async throws {
        for (label, side) in [("sqlite", self.sqlite), ("serve", self.serveBacking)] {
            let own = try side.worlds.sqliteStore(for: world)
            if try await own.allUsers().contains(where: { $0.email == Bystander.email }) {
                throw Violation(
                    invariant: "worlds-apart", detail: "\(label): the bystander of another world is a user of \(world)",
                    step: step)
            }
            for other in CheckCase.worlds where other != world {
                let found = try await Bystander.read(try side.worlds.sqliteStore(for: other))
                if found != bystanders["\(label) \(other)"] {
                    throw Violation(
                        invariant: "worlds-apart",
                        detail: "\(label): \(other) changed while the case ran in \(world):\n"
                            + "seeded: \(String(describing: bystanders["\(label) \(other)"]))\nfound:  \(found)",
                        step: step)
                }
            }
        }
    }

    static func load(_ yaml: String) throws -> Recipe {
        try RecipeLoader(environment: [:], overrides: [:]).load(yaml: yaml, file: CheckAssets.recipeFile)
    }
}

/// The state of one run of a case.
final class CaseRun {
    /// The sides under test; serve's gets a new client where a command stands for a new process
    /// (`newProcess(side:)`).
    var sides: [StoreSide]
    /// A new client of serve, as a new `sharelane` process opens.
    var makeServeStore: (@Sendable () -> WebServicesStore)?
    var spec: RecipeSpec
    var recipe: Recipe?
    let bugs: KnownBugs
    var report = CaseReport()
    var directories: [UserDirectory] = []
    var views: [StoreView] = []
    /// The record type of the last save, for the replay step of a save that broke a promise.
    var lastSaveType = "Note"
    /// Each side's incremental-plan cache, kept across the case's actions.
    var caches: [PlanCache] = []
    /// The bad network of serve's applies (`CaseRun+Faults.swift`), and what it did.
    var faults: CheckFaults?
    var tally = FaultTally()
    var caseSeed: UInt64 = 0

    init(sides: [StoreSide], spec: RecipeSpec, bugs: KnownBugs) {
        self.sides = sides
        self.spec = spec
        self.bugs = bugs
    }

    var owner: UserRecordName { Self.recordName(spec.owner) }
    /// The record name of the owner of `zone` (its `owner:`, else the recipe's).
    func owner(of zone: String) -> UserRecordName { Self.recordName(spec.owner(ofZone: zone)) }
    var logger: Logger { CaseRunner.logger }

    static func recordName(_ handle: String) -> UserRecordName {
        StableName.userRecordName(email: EmailAddress.normalized("\(handle)@example.com"))
    }

    func loadedRecipe() throws -> Recipe {
        guard let recipe else { throw Violation(invariant: "threw", detail: "no recipe loaded", step: -1) }
        return recipe
    }

    // MARK: - Actions

    func perform(_ action: CheckAction, step: Int) async throws {
        switch action {
        case .apply(let prune):
            try await apply(prune: prune, step: step)
            report.laneSteps.append(action.laneStep(spec))
        case .plan:
            try await plan(step: step)
            report.laneSteps.append(action.laneStep(spec))
        case .mutate(let mutation, let prune):
            guard try edit(mutation, step: step) else { return }
            report.laneSteps.append(action.laneStep(spec))
            try await apply(prune: prune, step: step)
        case .accept(let user, let zone, let root), .leave(let user, let zone, let root):
            guard spec.users.contains(user), user != spec.owner(ofZone: zone) else { return skip() }
            let owner = self.owner(of: zone)
            let caller = Self.recordName(user)
            guard let share = try await sides[0].namedShare(zone: zone, root: root, owner: owner) else {
                return skip()
            }
            let isAccept: Bool
            if case .accept = action { isAccept = true } else { isAccept = false }
            let expected =
                isAccept
                ? AccessRules.accept(caller: caller, zoneOwner: owner, share: share, subject: zone)
                : AccessRules.leave(caller: caller, zoneOwner: owner, share: share, subject: zone)
            try await direct(action, step: step, expected: expected) { side in
                guard let live = try await side.namedShare(zone: zone, root: root, owner: owner) else {
                    throw ShareError(.notFound, "\(side.label) has no such share")
                }
                if isAccept {
                    guard let url = live.url ?? live.shortGUID else { throw ShareError(.notFound, "share has no URL") }
                    _ = try await side.store.acceptShare(url: url, as: caller)
                } else {
                    try await side.store.leaveShare(
                        recordName: live.recordName, in: ZoneID(zoneName: zone, ownerRecordName: owner), as: caller
                    )
                }
            }
        case .stopSharing(let zone, let root):
            let owner = self.owner(of: zone)
            guard let share = try await sides[0].namedShare(zone: zone, root: root, owner: owner) else { return skip() }
            let expected = AccessRules.deleteShare(caller: owner, zoneOwner: owner, share: share, subject: zone)
            try await direct(action, step: step, expected: expected) { side in
                guard let live = try await side.namedShare(zone: zone, root: root, owner: owner) else {
                    throw ShareError(.notFound, "\(side.label) has no such share")
                }
                let outcomes = try await side.store.modifyRecords(
                    [RecordOperation(.forceDelete, share: live)], in: ZoneID(zoneName: zone), database: .private,
                    atomic: true, as: owner)
                if let error = outcomes.first?.error { throw error }
            }
        case .save(let user, let zone, let record, let parent, let field, let value):
            try await save(
                action, user: user, zone: zone, record: record, parent: parent, field: field, value: value, step: step)
            try await checkNoExistenceOracle(user: user, zone: zone, record: record, step: step)
        case .delete(let user, let zone, let record):
            guard spec.users.contains(user), try await zoneExists(zone) else { return skip() }
            let owner = self.owner(of: zone)
            guard try await sides[0].ownerRecord(record, zone: zone, owner: owner) != nil else { return skip() }
            let caller = Self.recordName(user)
            let (share, isRoot) = try await sides[0].coveringShare(zone: zone, record: record, owner: owner)
            let expected: ShareError? =
                caller == owner
                ? nil
                : AccessRules.delete(caller: caller, zoneOwner: owner, share: share, isRoot: isRoot, subject: record)
                    ?? readOnlyRefusal(caller: caller, share: share)
            let lane =
                caller == owner ? nil : try await laneJudgement(can: "delete", user: user, zone: zone, record: record)
            try await direct(action, step: step, expected: expected, lane: lane) { side in
                let (database, zoneID) = self.place(zone, caller)
                let outcomes = try await side.store.modifyRecords(
                    [RecordOperation(.forceDelete, Record(recordName: record, recordType: "", zoneID: zoneID))],
                    in: zoneID, database: database, atomic: true, as: caller)
                if let error = outcomes.first?.error { throw error }
            }
            try await checkNoExistenceOracle(user: user, zone: zone, record: record, step: step)
        case .stalePlan(let zone, let record):
            try await stalePlan(zone: zone, record: record, step: step)
            report.laneSteps.append("# step \(step + 1): `sharelane plan --out saved.json`, then:")
            report.laneSteps.append(action.laneStep(spec))
            report.laneSteps.append("# then `sharelane apply saved.json` must refuse, changing nothing")
        case .export:
            try await export(step: step)
            report.laneSteps.append(action.laneStep(spec))
        case .stoppedApply(let mutation, let after, let kill, let then):
            if let mutation { guard try edit(mutation, step: step) else { return } }
            report.laneSteps.append(action.laneStep(spec))
            report.laneSteps.append("apply")
            try await stoppedApply(after: after, kill: kill, then: then, step: step)
        }
    }

    /// Edits the recipe; false when the edit is skipped (it does not fit the recipe, or makes records need
    /// each other first).
    func edit(_ mutation: RecipeMutation, step: Int) throws -> Bool {
        let unmutated = spec
        guard mutation.apply(to: &spec) else {
            report.skipped += 1
            return false
        }
        do {
            recipe = try CaseRunner.load(spec.yaml())
        } catch  where "\(error)".contains(RecipeGenerator.writeOrderCycle) {
            // The edit made records need each other first (a VALIDATE reference into its own hierarchy):
            // the loader rightly refuses that recipe; the case goes on with the one before (an edit kept in
            // the spec would make the next step's load throw).
            spec = unmutated
            report.skipped += 1
            return false
        } catch {
            throw Violation(invariant: "mutated-recipe-invalid", detail: "\(mutation): \(error)", step: step)
        }
        report.versions.append((step, spec.yaml()))
        report.laneSteps.append(
            "# step \(step + 1): edit the recipe: \(mutation) (recipe version \(report.versions.count + 1) below), then:"
        )
        return true
    }

    private func skip() {
        report.skipped += 1
    }

    /// Whether the owner's zone exists: a write into a zone that is not there (deleted by `absent: true`, or
    /// before the first apply, which shrinking may remove) is not a question for the access rules.
    private func zoneExists(_ zone: String) async throws -> Bool {
        try await ensureSignedIn(step: -1)
        let zones = try await sides[0].store.listZones(in: .private, as: owner(of: zone))
        return zones.contains { $0.zoneID.zoneName == zone }
    }

    /// Where `caller` reaches the owner's zone: the owner in its private database, anyone else in its shared one.
    private func place(_ zone: String, _ caller: UserRecordName) -> (DatabaseScope, ZoneID) {
        let owner = owner(of: zone)
        return caller == owner
            ? (.private, ZoneID(zoneName: zone)) : (.shared, ZoneID(zoneName: zone, ownerRecordName: owner))
    }

    /// The refusal any write to `record` meets, whoever writes it: a `VALIDATE` reference among its fields to a
    /// record the zone no longer has. The store checks the record as it will be, so an edit of another field
    /// is refused too (VALIDATING_REFERENCE_ERROR), after the access rules.
    /// `written` is the field the write replaces (with text): its old reference no longer counts (a write over
    /// the very field that held the dangling reference is allowed).
    private func danglingReference(in record: Record?, zone: String, written: String) async throws -> ShareError? {
        guard let record else { return nil }
        let kept = record.fields.filter { $0.key != written }
        let targets = Set(kept.values.flatMap { $0.referencedRecordNames(action: .validate, inZone: zone) })
        for target in targets.sorted() where target != record.recordName {
            if try await sides[0].ownerRecord(target, zone: zone, owner: owner(of: zone)) == nil {
                return ShareError(
                    .validatingReferenceError, "the VALIDATE reference points to \(target), which does not exist",
                    subject: record.recordName)
            }
        }
        return nil
    }

    /// Read-only participants cannot write, whatever their role (Docs/Sharing.md). `AccessRules` caps an
    /// administrator at its permission; the checker states the promise on its own too, so that a change to the
    /// rules that broke it is still caught.
    private func readOnlyRefusal(caller: UserRecordName, share: Share?) -> ShareError? {
        guard let entry = share?.participant(caller), entry.acceptance == .accepted, entry.permission == .readOnly
        else { return nil }
        return ShareError(.accessDenied, "a read-only participant cannot write")
    }

    private func save(
        _ action: CheckAction, user: String, zone: String, record: String, parent: String?, field: String,
        value: FieldValue, step: Int
    ) async throws {
        guard spec.users.contains(user), try await zoneExists(zone) else { return skip() }
        let owner = owner(of: zone)
        let caller = Self.recordName(user)
        let existing = try await sides[0].ownerRecord(record, zone: zone, owner: owner)
        var parentName = existing?.parent
        if existing == nil, let parent, try await sides[0].ownerRecord(parent, zone: zone, owner: owner) != nil {
            parentName = parent
        }
        // A record made again behind the recipe's back keeps the type the recipe declares: CloudKit cannot
        // change a record's type, and the plan says so rather than trying.
        let declaredType = spec.records(in: zone).first { $0.record.name == record }?.record.type
        let type = existing?.recordType ?? declaredType ?? "Note"
        lastSaveType = type
        var expected: ShareError?
        if caller == owner {
            expected = nil
        } else if existing != nil {
            let (share, _) = try await sides[0].coveringShare(zone: zone, record: record, owner: owner)
            expected =
                AccessRules.update(caller: caller, zoneOwner: owner, share: share, subject: record)
                ?? readOnlyRefusal(caller: caller, share: share)
        } else {
            var (share, _) = try await sides[0].coveringShare(zone: zone, record: nil, owner: owner)
            if share == nil, let parentName {
                (share, _) = try await sides[0].coveringShare(zone: zone, record: parentName, owner: owner)
            }
            expected =
                AccessRules.create(caller: caller, zoneOwner: owner, share: share, subject: record)
                ?? readOnlyRefusal(caller: caller, share: share)
        }
        // A record whose VALIDATE reference points to a record deleted behind the recipe's back cannot be
        // written by anyone: the store answers VALIDATING_REFERENCE_ERROR after the access rules allowed it
        // A lane's `can: write` judges access only, so it is not asked.
        let dangling =
            expected == nil ? try await danglingReference(in: existing, zone: zone, written: field) : nil
        expected = expected ?? dangling
        let lane =
            caller == owner || existing == nil || dangling != nil
            ? nil : try await laneJudgement(can: "write", user: user, zone: zone, record: record)
        try await direct(action, step: step, expected: expected, lane: lane, type: type, parent: parentName) { side in
            let (database, zoneID) = self.place(zone, caller)
            let saved = Record(
                recordName: record, recordType: type, zoneID: zoneID, fields: [field: value], parent: parentName)
            let outcomes = try await side.store.modifyRecords(
                [RecordOperation(.forceUpdate, saved)], in: zoneID, database: database, atomic: true, as: caller)
            if let error = outcomes.first?.error { throw error }
        }
    }

    /// Runs a direct store operation on every side: its outcome must be what the access rules decide, the
    /// same on every store, and a refusal must leave every user's view as it was.
    private func direct(
        _ action: CheckAction, step: Int, expected: ShareError?, lane: Bool? = nil, type: String? = nil,
        parent: String? = nil, _ body: @escaping (StoreSide) async throws -> Void
    ) async throws {
        try await ensureSignedIn(step: step)
        var outcomes: [String] = []
        var after: [StoreView] = []
        for (index, side) in sides.enumerated() {
            var outcome = "ok"
            do {
                try await body(side)
                after.append(await view(of: side))
            } catch let error as ShareError {
                outcome = error.code.rawValue
                after.append(await view(of: side))
                if after[index] != views[index] {
                    throw Violation(
                        invariant: "refused-operation-changed-store",
                        detail: "\(action) was refused on \(side.label) (\(error)) yet changed:\n"
                            + Self.diff(views[index], after[index]), step: step)
                }
            }
            if (outcome == "ok") != (expected == nil) {
                let wanted = expected.map { "refused (\($0.code.rawValue): \($0.reason))" } ?? "allowed"
                throw Violation(
                    invariant: "access-rules",
                    detail: "\(action) on \(side.label): AccessRules says \(wanted), the store answered \(outcome)",
                    step: step)
            }
            outcomes.append(outcome)
        }
        report.directOperations += 1
        if outcomes[0] != "ok" { report.refusals += 1 }
        if lane != nil { report.laneJudgements += 1 }
        if let lane, lane != (outcomes[0] == "ok") {
            throw Violation(
                invariant: "lane-expect",
                detail:
                    "\(action): a lane's expect judged it \(lane ? "allowed" : "refused"), the store answered \(outcomes[0])",
                step: step)
        }
        if Set(outcomes).count > 1 {
            throw Violation(
                invariant: "outcomes-differ",
                detail: "\(action): " + zip(sides, outcomes).map { "\($0.label) \($1)" }.joined(separator: ", "),
                step: step)
        }
        var line = action.laneStep(spec)
        if let type { line = line.replacingOccurrences(of: "type: \(CheckAction.replayType)", with: "type: \(type)") }
        if case .save(_, _, _, _, _, _) = action, let parent, !line.contains("parent:") {
            line = line.replacingOccurrences(of: ", fields:", with: ", parent: \(parent), fields:")
        }
        if outcomes.first != "ok" {
            // A lane stops at a failing step; the refusal is replayed as an expectation instead.
            report.laneSteps.append("# refused as expected (\(outcomes[0])): \(line)")
            report.laneSteps.append(contentsOf: expectation(for: action))
        } else {
            report.laneSteps.append(line)
        }
        try compareViews(after, step: step)
    }

    private func expectation(for action: CheckAction) -> [String] {
        switch action {
        case .save(let u, let z, let r, _, _, _) where u != spec.owner(ofZone: z):
            return ["expect: { as: \(u), can: write, zone: \(z), record: \(r), to_be: false }"]
        case .delete(let u, let z, let r) where u != spec.owner(ofZone: z):
            return ["expect: { as: \(u), can: delete, zone: \(z), record: \(r), to_be: false }"]
        default:
            return []
        }
    }

    // MARK: - Plan, apply, saved plans, export

    func ensureSignedIn(step: Int) async throws {
        guard directories.isEmpty else { return }
        let recipe = try loadedRecipe()
        for side in sides {
            directories.append(try await UserDirectory.signIn(recipe, store: side.store, logger: logger))
        }
        let names = directories.map { $0.entries.map { "\($0.handle)=\($0.recordName ?? "-")" } }
        if Set(names).count > 1 {
            throw Violation(invariant: "users-differ", detail: "\(names)", step: step)
        }
        views = []
        for side in sides { views.append(await view(of: side)) }
    }

    private func plan(step: Int) async throws {
        let recipe = try loadedRecipe()
        var plans: [Plan] = []
        if directories.isEmpty {
            // Before any apply: planning must not create the recipe's users (a plan changes nothing: README, "Guarantees").
            for (index, side) in sides.enumerated() {
                let before = try await side.backing.allUsers()
                let full = try await Planner(store: side.store, logger: logger).plan(recipe)
                plans.append(full)
                // Through the cache, twice, as `sharelane plan` then `apply` make it: the first plan keeps the
                // recipe (the store has no owner yet), the second plans it from the records kept beside the
                // cache file. Each is the plan a full read gives.
                if let file = try recipeFile() {
                    for _ in 0..<2 {
                        try compareIncremental(
                            try await incrementalPlan(file, side: index, prune: false), full, side: side, step: step)
                    }
                }
                let after = try await side.backing.allUsers()
                if before != after {
                    throw Violation(
                        invariant: "plan-writes",
                        detail: "plan on \(side.label) created users: \(after.count - before.count) new", step: step)
                }
            }
            try comparePlans(plans, step: step)
            try await ensureSignedIn(step: step)
            return
        }
        for (index, side) in sides.enumerated() {
            plans.append(try await Planner(store: side.store, logger: logger).plan(recipe, users: directories[index]))
            let after = await view(of: side)
            if after != views[index] {
                throw Violation(
                    invariant: "plan-writes", detail: "plan changed \(side.label):\n" + Self.diff(views[index], after),
                    step: step)
            }
        }
        try comparePlans(plans, step: step)
    }

    private func apply(prune: Bool, step: Int) async throws {
        try await ensureSignedIn(step: step)
        let recipe = try loadedRecipe()
        let options = PlanOptions(prune: prune)
        // Serve's side plans and applies over a bad network; its views and the comparison after on a good one.
        try await faults?.on(seed: caseSeed &+ UInt64(step))
        do {
            try await applyBothSides(recipe, options: options, prune: prune, step: step)
        } catch {
            try await faults?.off()
            throw error
        }
        try await faults?.off()
        try await compareViews(step: step)
        try checkNothingMadeTwice(step: step)
    }

    private func applyBothSides(_ recipe: Recipe, options: PlanOptions, prune: Bool, step: Int) async throws {
        var plans: [Plan] = []
        // Each side's apply plans with its cache, as `sharelane apply` does, so that the apply leaves the cache
        // file as the store holds it after its writes: the next incremental plan is checked against a full one.
        let file = try recipeFile()
        for (index, side) in sides.enumerated() {
            plans.append(
                try await planStoppingCleanly(side: index, step: step) {
                    if let file, index < self.caches.count {
                        return try await self.incrementalPlan(file, side: index, prune: prune)
                    }
                    return try await Planner(store: side.store, logger: self.logger).plan(
                        recipe, users: self.directories[index], options: options)
                })
        }
        try comparePlans(plans, step: step)
        var failures: [[String]] = []
        for (index, side) in sides.enumerated() {
            var report = try await applyCounting(plans[index], side: side)
            if !report.succeeded, faults != nil, side.label == "serve" {
                report = try await finishStoppedApply(report, side: index, prune: prune, step: step)
            }
            failures.append(report.failures.map(\.address).sorted())
            if !report.succeeded {
                throw Violation(
                    invariant: "apply-failed",
                    detail: "apply on \(side.label) failed:\n"
                        + report.failures.map { "  \($0)" }.joined(separator: "\n"),
                    step: step)
            }
        }
        if Set(failures).count > 1 {
            throw Violation(invariant: "outcomes-differ", detail: "apply failures: \(failures)", step: step)
        }
        for (index, side) in sides.enumerated() {
            let again = try await planStoppingCleanly(side: index, step: step) {
                try await Planner(store: side.store, logger: self.logger).plan(
                    recipe, users: self.directories[index], options: options)
            }
            if !again.changes.isEmpty {
                throw Violation(
                    invariant: "apply-then-plan",
                    detail: "after apply, plan on \(side.label) still shows:\n"
                        + TextPlanRenderer().render(again), step: step)
            }
        }
    }

    private func stalePlan(zone: String, record: String, step: Int) async throws {
        let owner = owner(of: zone)
        guard let declared = spec.zone(zone), !declared.absent,
            let live = try await sides[0].ownerRecord(record, zone: zone, owner: owner),
            // The owner's write that makes the plan stale must be one the store takes.
            try await danglingReference(in: live, zone: zone, written: "stale") == nil
        else { return skip() }
        try await ensureSignedIn(step: step)
        let recipe = try loadedRecipe()
        for (index, side) in sides.enumerated() {
            let plan = try await Planner(store: side.store, logger: logger).plan(recipe, users: directories[index])
            let saved = try SavedPlan.decoded(SavedPlan.encoded(plan))
            guard let live = try await side.ownerRecord(record, zone: zone, owner: owner) else {
                throw Violation(invariant: "views-differ", detail: "\(side.label) has no \(zone)/\(record)", step: step)
            }
            let write = Record(
                recordName: record, recordType: live.recordType, zoneID: ZoneID(zoneName: zone),
                fields: ["stale": .string("x\(step)")], parent: live.parent)
            let outcomes = try await side.store.modifyRecords(
                [RecordOperation(.forceUpdate, write)], in: ZoneID(zoneName: zone), database: .private, atomic: true,
                as: owner)
            if let error = outcomes.first?.error {
                throw Violation(invariant: "owner-write-refused", detail: "\(side.label): \(error)", step: step)
            }
            let before = await view(of: side)
            do {
                _ = try await Applier(store: side.store, logger: logger).applySaved(saved)
                throw Violation(
                    invariant: "stale-plan-applied",
                    detail: "\(side.label) applied a plan saved before \(zone)/\(record) changed",
                    step: step)
            } catch let error as PlannerError {
                guard case .stalePlan = error else {
                    throw Violation(invariant: "stale-plan-error", detail: "\(side.label): \(error)", step: step)
                }
            }
            let after = await view(of: side)
            if before != after {
                throw Violation(
                    invariant: "refused-operation-changed-store",
                    detail: "the refused stale plan changed \(side.label):\n" + Self.diff(before, after), step: step)
            }
        }
        try await compareViews(step: step)
    }

    private func export(step: Int) async throws {
        try await ensureSignedIn(step: step)
        var texts: [String] = []
        for side in sides {
            let text = try await Exporter(store: side.store, logger: logger).export(
                owner: User(recordName: owner, email: "\(spec.owner)@example.com"),
                otherOwners: spec.owners.dropFirst().map {
                    User(recordName: Self.recordName($0), email: "\($0)@example.com")
                }, name: "check")
            texts.append(Self.sortingUsers(StoreSide.normalize(text, storeName: side.store.displayName)))
            let exported: Recipe
            do {
                exported = try CaseRunner.load(text)
            } catch {
                throw Violation(invariant: "export-invalid", detail: "\(side.label): \(error)\n\(text)", step: step)
            }
            let users = try await UserDirectory.signIn(exported, store: side.store, logger: logger)
            let plan = try await Planner(store: side.store, logger: logger).plan(exported, users: users)
            if !plan.changes.isEmpty {
                throw Violation(
                    invariant: "export-then-plan",
                    detail: "planning the export on \(side.label) shows:\n"
                        + TextPlanRenderer().render(plan) + "\nexport:\n" + text,
                    step: step)
            }
        }
        if Set(texts).count > 1 {
            throw Violation(invariant: "exports-differ", detail: texts.joined(separator: "\n----\n"), step: step)
        }
        try await compareViews(step: step)
    }

    // MARK: - Comparing stores

    /// The export's `users:` lines sorted: the SQLite store and `sharelane serve` list a share's participants
    /// in different orders, and the export names users in the order it meets them (reported with the
    /// checker; not one of the README's guarantees, so not checked here).
    static func sortingUsers(_ export: String) -> String {
        var lines = export.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: "users:") else { return export }
        var end = start + 1
        while end < lines.count, lines[end].hasPrefix("  ") { end += 1 }
        lines[(start + 1)..<end].sort()
        return lines.joined(separator: "\n")
    }

    private func comparePlans(_ plans: [Plan], step: Int) throws {
        let rendered = zip(sides, plans).map { $0.normalizedJSON($1) }
        if Set(rendered).count > 1 {
            throw Violation(
                invariant: "plans-differ",
                detail: zip(sides, rendered).map { "\($0.label):\n\($1)" }.joined(separator: "\n"), step: step)
        }
    }

    private func view(of side: StoreSide, full: Bool = false) async -> StoreView {
        // Several owners' private databases are written: each is read, as every user's is in a full view.
        await StoreView.read(
            side.store, users: spec.users.map { ($0, Self.recordName($0)) }, full: full || spec.owners.count > 1)
    }

    /// Both stores' views, read at once.
    private func bothViews(full: Bool) async -> [StoreView] {
        let users = spec.users.map { ($0, Self.recordName($0)) }
        let (a, b) = (sides[0].store, sides[1].store)
        let full = full || spec.owners.count > 1
        async let first = StoreView.read(a, users: users, full: full)
        async let second = StoreView.read(b, users: users, full: full)
        return await [first, second]
    }

    /// Every user's full view on both stores, read at once; they must be equal.
    func compareFullViews(step: Int) async throws {
        guard !directories.isEmpty else { return }
        let now = await bothViews(full: true)
        if now[0] != now[1] {
            throw Violation(
                invariant: "views-differ", detail: "sqlite → serve:\n" + Self.diff(now[0], now[1]), step: step)
        }
    }

    func compareViews(step: Int) async throws {
        try compareViews(await bothViews(full: false), step: step)
    }

    private func compareViews(_ now: [StoreView], step: Int) throws {
        views = now
        if now[0] != now[1] {
            throw Violation(
                invariant: "views-differ", detail: "sqlite → serve:\n" + Self.diff(now[0], now[1]), step: step)
        }
    }

    static func diff(_ a: StoreView, _ b: StoreView) -> String {
        let left = Set(a.lines)
        let right = Set(b.lines)
        let removed = a.lines.filter { !right.contains($0) }.map { "- \($0)" }
        let added = b.lines.filter { !left.contains($0) }.map { "+ \($0)" }
        return (removed + added).joined(separator: "\n")
    }
}

extension CaseRun {
    /// The recipe as a file beside the cache files, rewritten only when an edit changed it: a plan of an
    /// unchanged file comes from the cache file and the change feeds without loading it, as `sharelane plan`
    /// does. nil when the case keeps no cache files.
    func recipeFile() throws -> String? {
        guard let firstCache = caches.first else { return nil }
        let file = firstCache.file.deletingLastPathComponent().appendingPathComponent("check.yaml").path
        let yaml = spec.yaml()
        if (try? String(contentsOfFile: file, encoding: .utf8)) != yaml {
            try yaml.write(toFile: file, atomically: true, encoding: .utf8)
        }
        return file
    }

    /// The plan of the recipe file on one side, with that side's cache, as `sharelane plan` and `apply` make
    /// it: from the cache file and the change feeds when the file is unchanged since the last plan, else
    /// loaded.
    func incrementalPlan(_ file: String, side index: Int, prune: Bool) async throws -> Plan {
        let loader = RecipeLoader(environment: [:], overrides: [:])
        let planner = Planner(store: sides[index].store, logger: logger)
        let options = PlanOptions(prune: prune, cache: caches[index])
        if let unchanged = caches[index].unchangedRecipe(environment: [:]) {
            return try await planner.plan(unchanged, options: options) { try loader.loadWithInputs(path: file) }
        }
        let loaded = try loader.loadWithInputs(path: file)
        guard directories.indices.contains(index) else {
            // Before the users are signed in: looked up, as `sharelane plan` does.
            return try await planner.plan(loaded.recipe, inputs: loaded.inputs, options: options)
        }
        return try await planner.plan(
            loaded.recipe, users: directories[index], options: options, inputs: loaded.inputs)
    }

    /// The cache never changes a plan: after every action, each side's incremental plan, from the
    /// cache file its earlier plans left, is the plan a full read gives.
    func compareIncrementalPlans(step: Int) async throws {
        guard let recipe, !directories.isEmpty, caches.count == sides.count, let file = try recipeFile() else {
            return
        }
        for (index, side) in sides.enumerated() {
            let incremental = try await incrementalPlan(file, side: index, prune: false)
            let full = try await Planner(store: side.store, logger: logger).plan(recipe, users: directories[index])
            try compareIncremental(incremental, full, side: side, step: step)
        }
    }

    /// An incremental plan is the plan a full read gives, in every part a user sees or an apply uses.
    func compareIncremental(_ incremental: Plan, _ full: Plan, side: StoreSide, step: Int) throws {
        guard
            incremental.changes != full.changes || incremental.notes != full.notes
                || incremental.waiting != full.waiting || incremental.basis != full.basis
                || incremental.access != full.access
        else { return }
        throw Violation(
            invariant: "incremental-plan-differs",
            detail: "on \(side.label), the incremental plan differs from a full read's:\n"
                + Self.diff(
                    StoreView(lines: TextPlanRenderer().render(full).split(separator: "\n").map(String.init)),
                    StoreView(lines: TextPlanRenderer().render(incremental).split(separator: "\n").map(String.init))
                )
                + (incremental.basis != full.basis ? "\n(the bases differ)" : "")
                + (incremental.access != full.access ? "\n(the access before and after differ)" : ""),
            step: step)
    }
}
