import Applier
import Foundation
import Logging
import PlanModel
import Planner
import Recipe
import ShareKit

/// The `plan`, `apply` and `export` steps: the Planner module does the work, the step reports it.
struct PlannerSteps {
    let store: any Store
    let logger: Logger
    let location: SourceLocation
    /// Where a long apply says how far it has come, one line at a time, as `sharelane apply` says it in a CI log.
    var progressLine: (@Sendable (String) -> Void)? = nil

    /// Plans the recipe, changing nothing, and shows the changes under the step's line.
    func plan(_ recipe: Recipe, prune: Bool, only: [String]) async throws -> StepOutcome {
        let plan = try await makePlan(recipe, prune: prune, only: only)
        return StepOutcome(plan.summary.line, lines: changeLines(plan))
    }

    /// Plans the recipe, applies the plan, and shows what changed under the step's line.
    /// - Throws: `LaneError.stepFailed` listing the changes the store refused.
    func apply(_ recipe: Recipe, prune: Bool, only: [String]) async throws -> StepOutcome {
        // A plain line every few seconds (`SHARELANE_PROGRESS_INTERVAL`), on a terminal as in a CI log: the
        // lane's lines are whole lines, and a 100,000-record apply is otherwise a quarter of a minute of silence.
        let reporter = progressLine.map { write in
            ApplyProgressReporter(
                style: .lines(
                    interval: ApplyProgressReporter.interval(environment: ProcessInfo.processInfo.environment)),
                write: write)
        }
        var progress: (@Sendable (ApplyProgress) -> Void)? = nil
        if let reporter { progress = { reporter.report($0) } }
        do throws(PlanAndApply.Failure) {
            let (plan, report) = try await PlanAndApply(store: store, logger: logger)
                .run(recipe, options: PlanOptions(prune: prune, onlyZones: only), progress: progress)
            reporter?.finish()
            return StepOutcome(report.line, lines: changeLines(plan))
        } catch .planning(let error) {
            throw LaneError.stepFailed(action: "plan", reason: "\(error)", location: location)
        } catch .applying(let error) {
            throw LaneError.stepFailed(action: "apply", reason: "\(error)", location: location)
        } catch .changesFailed(let report) {
            reporter?.finish()
            throw LaneError.stepFailed(
                action: "apply",
                reason: report.line + "\n" + report.failureLines().map { "    \($0)" }.joined(separator: "\n"),
                location: location)
        }
    }

    /// Exports the live state of `owner`'s zones as a recipe, to a file or under the step's line; with the
    /// recipe's owner, the zones of the recipe's other owners too. The recipe's users keep their handles, as
    /// `sharelane export` keeps them, so that the export fits the lanes written for the recipe.
    func export(_ recipe: Recipe, zones: [String], owner: User, otherOwners: [User], to out: String?) async throws
        -> StepOutcome
    {
        let text: String
        do {
            text = try await Exporter(store: store, logger: logger).export(
                owner: owner, otherOwners: otherOwners, zones: zones, name: recipe.name, container: recipe.container,
                environment: recipe.environment.rawValue, keptHandles: recipe.handlesByEmail)
        } catch {
            throw LaneError.stepFailed(action: "export", reason: "\(error)", location: location)
        }
        guard let out else {
            return StepOutcome(
                nil, lines: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        }
        do {
            let url = URL(fileURLWithPath: out)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        } catch {
            throw LaneError.stepFailed(
                action: "export", reason: "cannot write \(out): \(error.localizedDescription)", location: location)
        }
        return StepOutcome("wrote \(out)")
    }

    private func makePlan(_ recipe: Recipe, prune: Bool, only: [String]) async throws -> Plan {
        do {
            return try await Planner(store: store, logger: logger)
                .plan(recipe, options: PlanOptions(prune: prune, onlyZones: only))
        } catch {
            throw LaneError.stepFailed(action: "plan", reason: "\(error)", location: location)
        }
    }

    /// One line per change (`+ record FamilyLists/groceries`), then the plan's notes; `sharelane plan`
    /// shows the fields as well.
    private func changeLines(_ plan: Plan) -> [String] {
        let changes = GeneratedRun.entries(plan, expand: false).map { entry in
            switch entry {
            case .change(let change): "\(change.symbol) \(change.address)"
            case .run(let run, _): run.line
            }
        }
        return changes + plan.notes + plan.waiting
    }
}
