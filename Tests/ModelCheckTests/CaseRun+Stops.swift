import Applier
import CloudKitWire
import Foundation
import Lanes
import PlanModel
import Planner
import Recipe
import ShareKit

// Applies stopped part-way (Docs/ModelCheck.md, "Stopped applies"): whatever comes after a stopped apply (a
// plan, a lane, a saved plan, another stopped apply), the next apply converges and the plan after it is empty.
// Each command after the stop is a process of its own, as on the command line: serve's side gets a new client,
// which holds no sign-in of the stopped one, and every side plans as `sharelane plan` and `apply` do, with
// their cache files.
extension CaseRun {
    func stoppedApply(after: Int, kill: Bool, then: [CheckAction.AfterStop], step: Int) async throws {
        // No sign-in of the checker's first: a stopped first apply creates the recipe's users itself.
        // Serve's side over the bad network, as in any apply; the checks after on a good one.
        try await faults?.on(seed: caseSeed &+ UInt64(step))
        do {
            try await stopAnApply(after: after, kill: kill, step: step)
            for next in then {
                switch next {
                case .plan:
                    for index in sides.indices {
                        _ = try await planStoppingCleanly(side: index, step: step) {
                            try await self.commandPlan(side: index)
                        }
                        newProcess(side: index)
                    }
                case .lane: try await laneApply(step: step)
                case .savedPlan: try await savedPlanApply(step: step)
                case .stoppedApply(let again, let kill): try await stopAnApply(after: again, kill: kill, step: step)
                }
            }
            try await applyUntilComplete(step: step)
        } catch {
            try await faults?.off()
            throw error
        }
        try await faults?.off()
        for index in sides.indices {
            let plan = try await commandPlan(side: index)
            newProcess(side: index)
            if !plan.changes.isEmpty {
                throw Violation(
                    invariant: "stopped-apply-then-plan",
                    detail: "after the apply that followed a stopped one, plan on \(sides[index].label) still shows:\n"
                        + TextPlanRenderer().render(plan), step: step)
            }
        }
        // The checker's own sign-ins on the new clients; then both sides must hold the same.
        directories = []
        try await ensureSignedIn(step: step)
        try await compareViews(step: step)
        try checkNothingMadeTwice(step: step)
    }

    /// Plans and applies on every side, stopping each apply once it has made `after` progress reports: as a
    /// first Ctrl-C does (`StopRequest`: the calls under way finish, nothing new starts), or, with `kill`, as
    /// SIGKILL does (the calls under way abandoned, their answers never read). Then each side is a new process.
    func stopAnApply(after: Int, kill: Bool, step: Int) async throws {
        for index in sides.indices {
            let plan = try await planStoppingCleanly(side: index, step: step) {
                try await self.commandPlan(side: index)
            }
            let stop = StopAfter(reports: after, kill: kill)
            let store = sides[index].store
            let logger = self.logger
            let task = Task {
                try await StopRequest.$current.withValue(stop.request) {
                    try await PlanAndApply(store: store, logger: logger).apply(plan, progress: { _ in stop.reported() })
                }
            }
            stop.running(task)
            let outcome = await task.result
            newProcess(side: index)
            report.stopsAsked += 1
            switch outcome {
            case .success(let report) where report.succeeded: break
            default: report.stopsMidway += 1
            }
            // Asked to stop (not killed), the apply reports: every change it did not make was not attempted, or
            // refused for now by the bad network; a stop must never fail a change the store was asked for.
            if !kill, case .success(let applied) = outcome, !applied.succeeded {
                let unclean = CheckFaults.stoppedCleanly(applied)
                if !unclean.isEmpty {
                    throw Violation(
                        invariant: "apply-stopped-uncleanly",
                        detail: "an apply asked to stop on \(sides[index].label) failed changes it started:\n"
                            + unclean.prefix(10).map { "  \($0)" }.joined(separator: "\n") + "\n" + applied.line,
                        step: step)
                }
                if stop.stopped, applied.stopped == nil {
                    throw Violation(
                        invariant: "apply-stopped-unsaid",
                        detail: "an apply asked to stop on \(sides[index].label) left changes undone without "
                            + "saying it stopped:\n" + applied.line, step: step)
                }
            }
        }
    }

    /// A lane whose step is `apply`, on every side: with the bad network it may stop, as any apply may; on a
    /// good one it must complete.
    func laneApply(step: Int) async throws {
        let recipe = try CaseRunner.load(spec.yaml(lane: ["apply"]))
        for index in sides.indices {
            let report = try await LaneRunner(store: sides[index].store, output: .discard, logger: logger)
                .run(lane: "check", of: recipe)
            newProcess(side: index)
            if let failure = report.failure, !(faults != nil && Self.stoppedByNetwork(failure)) {
                throw Violation(
                    invariant: "lane-after-stopped-apply",
                    detail: "a lane's apply after a stopped apply failed on \(sides[index].label): \(failure)",
                    step: step)
            }
        }
    }

    /// `sharelane plan --out FILE`, then `sharelane apply FILE` in a new process, on every side: nothing changed
    /// between them, so the saved plan must not be stale, and it must apply (or stop for the bad network).
    func savedPlanApply(step: Int) async throws {
        for index in sides.indices {
            let plan = try await planStoppingCleanly(side: index, step: step) {
                try await self.commandPlan(side: index)
            }
            let saved = try SavedPlan.decoded(SavedPlan.encoded(plan))
            newProcess(side: index)
            do {
                let report = try await Applier(store: sides[index].store, logger: logger).applySaved(saved)
                if !report.succeeded, !(faults != nil && CheckFaults.stoppedCleanly(report).isEmpty) {
                    throw Violation(
                        invariant: "saved-plan-after-stopped-apply",
                        detail: "a saved plan made after a stopped apply failed on \(sides[index].label):\n"
                            + report.failures.prefix(10).map { "  \($0)" }.joined(separator: "\n"), step: step)
                }
            } catch let error as PlannerError where faults != nil && Self.stoppedByNetwork(error) {
                // The bad network stopped its check: the next apply plans again.
            } catch let error as PlannerError {
                throw Violation(
                    invariant: "saved-plan-after-stopped-apply",
                    detail: "a saved plan made after a stopped apply was refused on \(sides[index].label): \(error)",
                    step: step)
            }
            newProcess(side: index)
        }
    }

    /// The apply that must converge: planned and applied as `sharelane apply` does, a new process each time;
    /// over the bad network it may stop a few times, then it runs on a good one and must complete.
    func applyUntilComplete(step: Int) async throws {
        for index in sides.indices {
            var last: ApplyReport?
            for attempt in 1...5 {
                if attempt == 5 { try await faults?.off() }
                let plan = try await planStoppingCleanly(side: index, step: step) {
                    try await self.commandPlan(side: index)
                }
                let report = try await applyCounting(plan, side: sides[index])
                newProcess(side: index)
                last = report
                if report.succeeded { break }
                if faults == nil || !CheckFaults.stoppedCleanly(report).isEmpty { break }
            }
            if let last, !last.succeeded {
                throw Violation(
                    invariant: "stopped-apply-does-not-converge",
                    detail: "the apply after a stopped apply failed on \(sides[index].label):\n"
                        + last.failures.prefix(10).map { "  \($0)" }.joined(separator: "\n") + "\n" + last.line,
                    step: step)
            }
        }
    }

    /// Whether a lane's or a saved plan's failure is the bad network's: its retries spent on a store that stayed
    /// unavailable or throttling, or on connections lost (an apply stopped so, or a read of its plan or check).
    static func stoppedByNetwork(_ error: any Error) -> Bool {
        let text = "\(error)"
        return isNetworkFailure(error) || text.contains("the connection to the store was lost too often")
            || text.contains("lost the connection")
    }

    /// The plan of the recipe file on one side as `sharelane plan` and `sharelane apply` make it, in a process
    /// that has signed nobody in: from the cache file when the file is unchanged since its last plan, else
    /// loaded, its users looked up.
    func commandPlan(side index: Int) async throws -> Plan {
        guard let file = try recipeFile() else {
            return try await Planner(store: sides[index].store, logger: logger).plan(try loadedRecipe())
        }
        let loader = RecipeLoader(environment: [:], overrides: [:])
        let planner = Planner(store: sides[index].store, logger: logger)
        let options = PlanOptions(cache: caches[index])
        if let unchanged = caches[index].unchangedRecipe(environment: [:]) {
            return try await planner.plan(unchanged, options: options) { try loader.loadWithInputs(path: file) }
        }
        let loaded = try loader.loadWithInputs(path: file)
        return try await planner.plan(loaded.recipe, inputs: loaded.inputs, options: options)
    }

    /// The next command on this side runs in a process of its own: serve's side gets a new client, holding no
    /// sign-in (the embedded store holds none to lose).
    func newProcess(side index: Int) {
        guard let makeServeStore, sides[index].label == "serve" else { return }
        sides[index] = StoreSide(label: sides[index].label, store: makeServeStore(), backing: sides[index].backing)
    }
}

/// Asks an apply to stop once it has made a number of progress reports, and, for a SIGKILL, cancels it then,
/// abandoning the calls under way.
final class StopAfter: @unchecked Sendable {
    let request = StopRequest()
    private let lock = NSLock()
    private let reports: Int
    private let kill: Bool
    private var count = 0
    private var task: Task<ApplyReport, any Error>?
    private var fired = false

    init(reports: Int, kill: Bool) {
        self.reports = reports
        self.kill = kill
    }

    /// Whether the stop was asked for (the apply may have ended first).
    var stopped: Bool { lock.withLock { fired } }

    /// The apply's task, once started; stopped at once when it was to stop before its first report.
    func running(_ task: Task<ApplyReport, any Error>) {
        lock.withLock { self.task = task }
        if reports == 0 { fire() }
    }

    func reported() {
        let due: Bool = lock.withLock {
            count += 1
            return count == reports
        }
        if due { fire() }
    }

    private func fire() {
        let task: Task<ApplyReport, any Error>? = lock.withLock {
            fired = true
            return self.task
        }
        request.request()
        if kill { task?.cancel() }
    }
}
