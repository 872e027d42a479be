import Applier
import Foundation
import Logging
import PlanModel
import Recipe
import ShareKit

/// Plans a recipe, applies the plan, and records what the apply wrote in the plan's cache: the one sequence
/// that `apply` and `destroy`, a lane's `apply` step, the base of `plan --against` and a seeded fixture share.
///
/// The applier only applies (it cannot see the recipe or the cache); the cache file a plan made with a cache
/// reads next is recorded here, after the apply returns what it wrote (`PlanCache.remember`).
public struct PlanAndApply: Sendable {
    public let planner: Planner
    public let applier: Applier

    /// Plans and applies against `store`, logging to `logger`, with at most `parallelism` store calls under
    /// way.
    public init(store: any Store, logger: Logger, parallelism: Int = Parallelism.default) {
        planner = Planner(store: store, logger: logger, parallelism: parallelism)
        applier = Applier(store: store, logger: logger, parallelism: parallelism)
    }

    /// Why a recipe was not applied whole (`run`), each with what its caller words.
    public enum Failure: Error, CustomStringConvertible {
        /// The plan could not be made; nothing was written.
        case planning(any Error)
        /// The plan was made for another store; nothing was written.
        case applying(any Error)
        /// The store refused some changes, or the apply stopped: the report says which.
        case changesFailed(ApplyReport)

        public var description: String {
            switch self {
            case .planning(let error), .applying(let error): "\(error)"
            case .changesFailed(let report): report.line
            }
        }
    }

    /// Plans `recipe` with `options`, applies the plan, and records the apply in the plan's cache.
    /// - Parameter progress: told after each store call of the apply, and of each wait (`ApplyProgress`).
    /// - Returns: the plan and the report of an apply that made every change.
    /// - Throws: `Failure` saying which step did not go through, with the report when changes failed.
    public func run(
        _ recipe: Recipe, options: PlanOptions = PlanOptions(), progress: (@Sendable (ApplyProgress) -> Void)? = nil
    ) async throws(Failure) -> (plan: Plan, report: ApplyReport) {
        let plan: Plan
        do {
            plan = try await planner.plan(recipe, options: options)
        } catch {
            throw .planning(error)
        }
        let report: ApplyReport
        do {
            report = try await apply(plan, progress: progress)
        } catch {
            throw .applying(error)
        }
        guard report.succeeded else { throw .changesFailed(report) }
        return (plan, report)
    }

    /// Applies `plan`, made by `planner` or read from a saved plan, and leaves the plan's cache files as the
    /// store holds them after the apply's writes (a saved plan has none: the next plan reads what it wrote).
    ///
    /// Store refusals do not throw: they are reported per change in the returned `ApplyReport`.
    /// - Throws: only when the plan was made against another store (`PlannerError.wrongStore`).
    public func apply(_ plan: Plan, progress: (@Sendable (ApplyProgress) -> Void)? = nil) async throws
        -> ApplyReport
    {
        let store = applier.store
        let encoding = PlanCache.startEncoding(plan, store: store)
        var report = try await applier.apply(plan, progress: progress)
        await PlanCache.remember(
            plan, after: report, encoding: encoding, store: store, logger: applier.logger,
            parallelism: applier.parallelism)
        // Recorded: the tags written are not kept past the apply (about 2 MB at 100,000 records).
        report.writes = ApplyWrites()
        return report
    }
}
