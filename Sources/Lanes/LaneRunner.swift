import Foundation
import Logging
import Recipe
import ShareKit

/// Runs the lanes of a recipe against any `Store`, one step at a time, acting as the recipe's users.
///
/// A lane run is fastlane's: the recipe's `before_all` steps, the lane's steps between `before_each` and
/// `after_each` (as every lane a `lane:` step calls), then `after_all` when every step succeeded, or the `error`
/// steps when one failed. The first failing step stops the lane. Each step
/// prints one line with its outcome and time to the output, and the run returns a `LaneReport`.
public struct LaneRunner: Sendable {
    /// Loads the recipe again with these variables overriding its `vars` (for `lane:` steps with parameters).
    public typealias RecipeReloader = @Sendable (_ overrides: [String: String]) throws -> Recipe

    public let store: any Store
    let output: LaneOutput
    private let logger: Logger
    private let reload: RecipeReloader?
    private let overrides: [String: String]

    /// A runner over `store`.
    ///
    /// - Parameters:
    ///   - output: where the step lines go.
    ///   - reload: loads the recipe file again with overrides; without it, `lane:` steps that pass
    ///     parameters fail with a message saying so.
    ///   - overrides: the variables the recipe was loaded with (command-line parameters), which
    ///     parameters of called lanes are merged over.
    public init(
        store: any Store, output: LaneOutput, logger: Logger, reload: RecipeReloader? = nil,
        overrides: [String: String] = [:]
    ) {
        self.store = store
        self.output = output
        self.logger = logger
        self.reload = reload
        self.overrides = overrides
    }

    /// Runs the lane `name` of `recipe` as the command line asks for it: with the hooks, refusing private lanes.
    ///
    /// - Returns: the report; `report.succeeded` is false when a step failed (its error is printed too).
    /// - Throws: `LaneError.unknownLane` or `.privateLane`, before anything runs.
    public func run(lane name: String, of recipe: Recipe) async throws -> LaneReport {
        guard let lane = recipe.lane(name) else {
            throw LaneError.unknownLane(
                name: name, available: recipe.lanes.filter { !$0.isPrivate }.map(\.name), file: recipe.file)
        }
        if lane.isPrivate {
            throw LaneError.privateLane(name: name, location: lane.location)
        }
        let session = LaneSession(store: store, logger: logger)
        let run = Run()
        let start = ContinuousClock.now
        logger.info("running lane \(name) of \(recipe.file) on \(store.displayName)")
        output.line("▸ lane \(name) — \(recipe.name) on \(store.worldName)")
        let scope = Scope(recipe: recipe, overrides: overrides, lanes: [name])
        run.values.register(LaneValueNames.lane, .text(name))
        do {
            if !recipe.beforeAll.isEmpty {
                output.line("▸ before_all")
                try await runSteps(recipe.beforeAll, hook: "before_all", in: scope, depth: 1, session, run)
            }
            try await runLane(lane, in: scope, depth: 0, session, run)
            if !recipe.afterAll.isEmpty {
                output.line("▸ after_all")
                try await runSteps(recipe.afterAll, hook: "after_all", in: scope, depth: 1, session, run)
            }
        } catch let error as LaneError {
            run.failure = error
            run.failurePrinted = false
            // A lane asked to stop starts nothing more, not even its error hook.
            if !recipe.onError.isEmpty, !StopRequest.isRequestedNow {
                // The hook learns what failed and where, as fastlane's `error do |lane, exception|` does.
                run.values.register(LaneValueNames.laneError, .text(error.message))
                run.values.register(LaneValueNames.laneErrorPlace, .text(error.location.map { "\($0)" } ?? ""))
                output.line("▸ error")
                do {
                    try await runSteps(recipe.onError, hook: "error", in: scope, depth: 1, session, run)
                } catch {
                    // The error hook's own failure is printed by its step; the lane's failure stays the one reported.
                }
            }
        }
        let total = Self.milliseconds(since: start)
        let count = run.steps.count
        if let failure = run.failure, StopRequest.isRequestedNow {
            let place = failure.location.map { " at \($0)" } ?? ""
            output.line(
                "✘ lane \(name) stopped\(place) after \(count) step\(count == 1 ? "" : "s") (\(total) ms): it was asked "
                    + "to stop, and what it did stays done; run it again from the start")
        } else if let failure = run.failure {
            let place = failure.location.map { " at \($0)" } ?? ""
            output.line("✘ lane \(name) failed\(place) after \(count) step\(count == 1 ? "" : "s") (\(total) ms)")
        } else {
            output.line("✔ lane \(name) succeeded: \(count) step\(count == 1 ? "" : "s") in \(total) ms")
        }
        return LaneReport(lane: name, steps: run.steps, failure: run.failure, milliseconds: total)
    }

    // MARK: - Running steps

    /// The recipe and variables in force, and the chain of lanes being run (to refuse cycles).
    struct Scope {
        var recipe: Recipe
        var overrides: [String: String]
        var lanes: [String]
        /// Whether the steps are `before_each`'s or `after_each`'s (or of a lane they call): the lanes these call
        /// run without them, which would otherwise call themselves without end.
        var inEachHook = false
    }

    /// Results collected across the whole run.
    final class Run {
        var steps: [LaneReport.StepResult] = []
        /// What steps registered (`register: NAME`) for later steps, across called lanes too.
        let values = LaneValues()
        var failure: LaneError?
        /// Whether the failing step's message was printed (steps of calling lanes only close it).
        var failurePrinted = false
    }

    func runSteps(
        _ steps: [Step], hook: String?, in scope: Scope, depth: Int, _ session: LaneSession, _ run: Run
    ) async throws {
        for step in steps {
            // Asked to stop (a first Ctrl-C): the step under way finished; nothing new starts.
            if StopRequest.isRequestedNow { throw LaneError.interrupted(location: step.location) }
            try await runStep(step, hook: hook, in: scope, depth: depth, session, run)
        }
    }

    private func runStep(
        _ step: Step, hook: String?, in scope: Scope, depth: Int, _ session: LaneSession, _ run: Run
    ) async throws {
        let indent = String(repeating: "  ", count: depth)
        let summary = StepSummary.text(of: step, owner: scope.recipe.owner)
        let start = ContinuousClock.now
        logger.debug("step \(summary) at \(step.location)")
        // What a command prints is kept for the reports, whether the step succeeds or fails.
        let transcript = StepTranscript()
        do {
            // Every step's text gets the lane's values the same way, whatever its action.
            let step = try await LaneValueResolver(session: session, recipe: scope.recipe, values: run.values)
                .resolve(step)
            let outcome: StepOutcome
            switch step.action {
            case .lane(let name, let parameters):
                output.line("\(indent)▸ \(summary)")
                outcome = StepOutcome(
                    try await callLane(name, parameters: parameters, from: step, in: scope, depth: depth, session, run))
            case .sh(let shell):
                // Its output streams under this line as it comes.
                output.line("\(indent)▸ \(summary)")
                outcome = try await script(scope, session, run, indent: indent, transcript).shell(shell, step: step)
            case .outside(let action):
                output.line("\(indent)▸ \(summary)")
                outcome = try await script(scope, session, run, indent: indent, transcript).outside(action, step: step)
            default:
                outcome = try await perform(step, in: scope.recipe, session, indent: indent)
            }
            let detail = outcome.detail
            let ms = Self.milliseconds(since: start)
            let note = detail.map { " — \($0)" } ?? ""
            output.line("\(indent)✔ \(summary)\(note)  (\(ms) ms)")
            for line in outcome.lines {
                output.line(line.isEmpty ? "" : "\(indent)    \(line)")
            }
            run.steps.append(
                LaneReport.StepResult(
                    summary: summary, detail: detail, error: nil, milliseconds: ms, location: step.location,
                    depth: depth, hook: hook, output: transcript.text))
        } catch {
            let ms = Self.milliseconds(since: start)
            let laneError = Self.laneError(error, action: summary, at: step.location).naming(session.handles)
            output.line("\(indent)✘ \(summary)  (\(ms) ms)")
            // A failure inside a called lane was printed where it happened; the calling step only closes it.
            if !run.failurePrinted {
                output.line("\(indent)  \(laneError)")
                run.failurePrinted = true
            }
            run.steps.append(
                LaneReport.StepResult(
                    summary: summary, detail: nil, error: laneError, milliseconds: ms, location: step.location,
                    depth: depth, hook: hook, output: transcript.text))
            throw laneError
        }
    }

    private func script(
        _ scope: Scope, _ session: LaneSession, _ run: Run, indent: String, _ transcript: StepTranscript
    ) -> ScriptSteps {
        ScriptSteps(
            store: store, output: output, recipe: scope.recipe, lane: scope.lanes.first ?? "",
            values: run.values, indent: indent, transcript: transcript)
    }

    private func callLane(
        _ name: String, parameters: [String: String], from step: Step, in scope: Scope, depth: Int,
        _ session: LaneSession, _ run: Run
    ) async throws -> String? {
        if scope.lanes.contains(name) {
            throw LaneError.laneCycle(chain: scope.lanes + [name], location: step.location)
        }
        var callee = scope
        callee.lanes.append(name)
        if !parameters.isEmpty {
            guard let reload else {
                throw LaneError.stepFailed(
                    action: "lane \(name)",
                    reason: "parameters need the recipe file to be loaded again, and this runner was given no loader",
                    location: step.location)
            }
            callee.overrides = scope.overrides.merging(parameters) { _, new in new }
            do {
                callee.recipe = try reload(callee.overrides)
            } catch {
                throw LaneError.stepFailed(
                    action: "lane \(name)",
                    reason: "loading the recipe with \(StepSummary.parameters(parameters)): \(error)",
                    location: step.location)
            }
        }
        guard let lane = callee.recipe.lane(name) else {
            throw LaneError.stepFailed(
                action: "lane \(name)",
                reason: "the recipe has no lane named '\(name)'"
                    + Suggestion.hint(for: name, in: callee.recipe.lanes.map(\.name)) + "; its lanes are: "
                    + callee.recipe.lanes.map(\.name).joined(separator: ", "),
                location: step.location)
        }
        let before = run.steps.count
        try await runLane(lane, in: callee, depth: depth + 1, session, run)
        let count = run.steps.count - before
        return "\(count) step\(count == 1 ? "" : "s")"
    }

    // MARK: - Actions

    /// Performs one step other than `lane`, returning what it has to say about its outcome.
    private func perform(_ step: Step, in recipe: Recipe, _ session: LaneSession, indent: String) async throws
        -> StepOutcome
    {
        // `environment:` plans and applies the recipe in that environment of its container: a world of its own.
        let output = output
        let steps = PlannerSteps(
            store: try step.environment.map { try store.inEnvironment($0) } ?? store, logger: logger,
            location: step.location, progressLine: { output.line("\(indent)  … \($0)") })
        switch step.action {
        case .plan(let prune, let only):
            return try await steps.plan(recipe, prune: prune, only: only)
        case .apply(let prune, let only):
            return try await steps.apply(recipe, prune: prune, only: only)
        case .export(let out, let zones):
            let (handle, actor) = try await session.actor(of: step, in: recipe)
            var otherOwners: [User] = []
            if handle == recipe.owner {
                for other in recipe.owners.dropFirst() {
                    otherOwners.append(try await session.user(other, in: recipe, at: step.location))
                }
            }
            return try await steps.export(recipe, zones: zones, owner: actor, otherOwners: otherOwners, to: out)
        default:
            guard let expected = step.expectedError else {
                guard let within = step.within else {
                    return StepOutcome(try await performAction(step, in: recipe, session))
                }
                return StepOutcome(
                    try await eventually(
                        within: within, action: StepSummary.text(of: step, owner: recipe.owner), at: step.location
                    ) { try await performAction(step, in: recipe, session) })
            }
            return try await refused(step, expected, in: recipe, session)
        }
    }

    /// A step with `expect_error: CODE`: it succeeds when the store refuses it with that code (a refusal
    /// changes nothing), and fails when the store allows it or refuses it otherwise.
    private func refused(_ step: Step, _ expected: ServerErrorCode, in recipe: Recipe, _ session: LaneSession)
        async throws -> StepOutcome
    {
        let action = StepSummary.text(of: step, owner: recipe.owner)
        let detail: String?
        do {
            detail = try await performAction(step, in: recipe, session)
        } catch let error as ShareError {
            guard error.code == expected else {
                throw LaneError.stepFailed(
                    action: action,
                    reason: "expected the store to refuse it with \(expected.rawValue), but it refused with \(error)",
                    location: step.location)
            }
            // Said with the recipe's handles, as a failure is.
            let said = session.handles.reduce("refused as expected: \(error)") {
                $0.replacingOccurrences(of: $1.key, with: $1.value)
            }
            return StepOutcome(said)
        }
        throw LaneError.stepFailed(
            action: action,
            reason: "expected the store to refuse it with \(expected.rawValue), but it was allowed"
                + (detail.map { " (\($0))" } ?? ""),
            location: step.location)
    }

    private func performAction(_ step: Step, in recipe: Recipe, _ session: LaneSession) async throws -> String? {
        let location = step.location
        switch step.action {
        case .plan, .apply, .export:
            return nil
        case .accept(let zone, let record):
            return try await accept(zone: zone, record: record, step: step, recipe: recipe, session)
        case .acceptURL(let url):
            return try await accept(url: url, step: step, recipe: recipe, session)
        case .leave(let zone, let record):
            return try await leave(zone: zone, record: record, step: step, recipe: recipe, session)
        case .removeParticipant(let zone, let record, let participant):
            return try await changeMembership(
                zone: zone, record: record, participant: participant, to: nil, step: step, recipe: recipe, session)
        case .changePermission(let zone, let record, let participant, let permission):
            return try await changeMembership(
                zone: zone, record: record, participant: participant, to: permission, step: step, recipe: recipe,
                session)
        case .save(let zone, let record, let type, let parent, let fields):
            return try await save(
                zone: zone, record: record, type: type, parent: parent, fields: fields, step: step, recipe: recipe,
                session)
        case .delete(let zone, let record):
            return try await delete(zone: zone, record: record, step: step, recipe: recipe, session)
        case .expect(let expectation):
            let (handle, actor) = try await session.actor(of: step, in: recipe)
            let owner = try await session.owner(ofZone: expectation.zone, in: recipe, at: location)
            var check = ExpectationCheck(
                session: session, actorHandle: handle, actor: actor, owner: owner, location: location)
            check.isPublic = step.database == .public
            return try await check.verify(expectation)
        case .reset:
            guard store.capabilities.canReset else {
                throw LaneError.resetRefused(store: store.displayName, location: location)
            }
            try await store.reset()
            // One world: the recipe's container in its environment; the other environment keeps its records.
            return "emptied \(recipe.container) in \(recipe.environment.rawValue)"
        case .lane:
            return nil
        case .query(let query):
            return try await self.query(query, step: step, recipe: recipe, session)
        case .subscribe(let subscribe):
            return try await self.subscribe(subscribe, step: step, recipe: recipe, session)
        case .sh, .outside:
            return nil
        case .deploySchema:
            let (_, actor) = try await session.actor(of: step, in: recipe)
            let changes = try await store.deploySchema(as: actor.recordName)
            return changes.isEmpty
                ? "production already holds development's schema"
                : "\(changes.count) change\(changes.count == 1 ? "" : "s") deployed to production"
        }
    }

    private func query(_ query: QueryStep, step: Step, recipe: Recipe, _ session: LaneSession) async throws
        -> String?
    {
        let (_, actor) = try await session.actor(of: step, in: recipe)
        let owner = try await session.owner(ofZone: query.zone, in: recipe, at: step.location)
        let store = try step.environment.map { try self.store.inEnvironment($0) } ?? self.store
        let records = try await QueryRun(store: store).records(
            query, actor: actor.recordName, owner: owner.recordName)
        let names = records.map(\.recordName)
        let found =
            "\(names.count) record\(names.count == 1 ? "" : "s")"
            + (names.isEmpty ? "" : ": " + names.joined(separator: ", "))
        switch query.expect {
        case .count(let count) where count != names.count:
            throw LaneError.expectationFailed(
                expected: "\(count) record\(count == 1 ? "" : "s")", found: found, location: step.location)
        case .names(let expected) where expected != names:
            throw LaneError.expectationFailed(
                expected: "records " + expected.joined(separator: ", ") + " in this order", found: found,
                location: step.location)
        default:
            return found
        }
    }

    private func save(
        zone: String, record name: String, type: String, parent: String?, fields: [String: DeclaredValue],
        step: Step, recipe: Recipe, _ session: LaneSession
    ) async throws -> String? {
        let (handle, actor) = try await session.actor(of: step, in: recipe)
        let owner = try await session.owner(ofZone: zone, in: recipe, at: step.location)
        let (database, zoneID) = session.place(ofZone: zone, for: actor, owner: owner)
        let store = try step.environment.map { try self.store.inEnvironment($0) } ?? self.store
        var values: [String: FieldValue] = [:]
        for (key, declared) in fields {
            switch declared {
            case .value(let value):
                values[key] = Self.addressed(value, zone: zone, zoneID: zoneID)
            case .shareURL(let shareZone, let shareRecord):
                let shareOwner =
                    recipe.owner(ofZone: shareZone) == recipe.owner(ofZone: zone)
                    ? owner : try await session.owner(ofZone: shareZone, in: recipe, at: step.location)
                let share = try await session.namedShare(
                    zone: shareZone, record: shareRecord, owner: shareOwner, at: step.location)
                guard let url = share.url else {
                    throw LaneError.stepFailed(
                        action: "save", reason: "share \(StepSummary.address(shareZone, shareRecord)) has no URL",
                        location: step.location)
                }
                values[key] = .string(url)
            }
        }
        let record = Record(recordName: name, recordType: type, zoneID: zoneID, fields: values, parent: parent)
        // forceUpdate writes the named fields whatever the change tag, and creates a missing record, so a lane
        // can be run again on the same store.
        // A field's `!asset` file is found beside the recipe, and its bytes kept or uploaded with the save.
        let file = recipe.file
        let write = ZoneWrite(
            [RecordOperation(.forceUpdate, record)], in: zoneID, database: database, atomic: true,
            assetFiles: AssetFiles { Recipe.assetPath(for: $0, recipeFile: file) })
        let outcomes = try await store.modifyRecords(write, as: actor.recordName)
        if let error = outcomes.first?.error { throw error }
        return "in \(handle)'s \(database.rawValue) database"
    }

    private func delete(zone: String, record name: String, step: Step, recipe: Recipe, _ session: LaneSession)
        async throws -> String?
    {
        let (_, actor) = try await session.actor(of: step, in: recipe)
        let owner = try await session.owner(ofZone: zone, in: recipe, at: step.location)
        let (database, zoneID) = session.place(ofZone: zone, for: actor, owner: owner)
        let store = try step.environment.map { try self.store.inEnvironment($0) } ?? self.store
        let record = Record(recordName: name, recordType: "", zoneID: zoneID)
        let outcomes = try await store.modifyRecords(
            [RecordOperation(.forceDelete, record)], in: zoneID, database: database, atomic: true, as: actor.recordName)
        if let error = outcomes.first?.error {
            if error.code == .notFound { return "already absent" }
            throw error
        }
        return nil
    }

    // MARK: - Helpers

    /// References written in a recipe point into the owner's zone; a participant reaches that zone under the
    /// owner's real record name.
    private static func addressed(_ value: FieldValue, zone: String, zoneID: ZoneID) -> FieldValue {
        switch value {
        case .reference(var reference):
            if let target = reference.zoneID, target.zoneName == zone, target.ownerRecordName == defaultOwnerName {
                reference.zoneID = zoneID
            }
            return .reference(reference)
        case .list(let type, let values):
            return .list(elementType: type, values.map { addressed($0, zone: zone, zoneID: zoneID) })
        default:
            return value
        }
    }

    static func laneError(_ error: any Error, action: String, at location: SourceLocation) -> LaneError {
        if let laneError = error as? LaneError { return laneError }
        if let shareError = error as? ShareError {
            return .stepFailed(action: action, reason: "the store refused: \(shareError)", location: location)
        }
        return .stepFailed(action: action, reason: "\(error)", location: location)
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        let elapsed = ContinuousClock.now - start
        return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }
}
