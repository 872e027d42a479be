import Foundation
import Logging
import PlanModel
import ShareKit

/// Applies a plan to a store: exactly the plan's changes, in CloudKit's batch size, reporting what was done
/// and what failed.
///
/// The order: zones are created first; then, zone by zone, record deletions (children first), records
/// (parents and `VALIDATE` targets first) with each new share in the same batch as its root record,
/// participant changes folded into their share, share deletions; then acceptances, as each participant; then fields holding the URL of
/// a share created in this apply; then public records; then subscriptions, as each user; zone deletions last. The store waits out
/// what the network asks (`StoreRetry`); a change the store refuses is reported, not tried again, and planning again shows what is
/// left.
public struct Applier: Sendable {
    public let store: any Store
    public let logger: Logger
    /// The most store calls under way at once (`apply --parallelism`): zones written, users signed in, shares
    /// accepted.
    public let parallelism: Int

    /// CloudKit's limit of operations a `records/modify` request may carry.
    public static let batchSize = CloudKitLimits.operationsPerRequest
    /// How many private zones the embedded store is given at once (each zone's batches still go one at a
    /// time, in order); other stores get `parallelism`.
    static let localZonesInFlight = 3
    /// How many users' sign-ins or acceptances the embedded store is given at once; other stores get
    /// `parallelism` (over `http:` each is a small request, and a few at a time left the server waiting).
    package static let localUsersInFlight = 8
    /// Operations a call (about: whole zones go together), for a store that writes many zones in one
    /// transaction: large enough that commits cost little, small enough that a killed apply loses little
    /// work and the next call is built while the store writes this one.
    static let operationsPerTransaction = 2_000
    /// Operations the first such call (about): the calls grow from it to `operationsPerTransaction`.
    static let firstOperationsPerTransaction = 100

    /// An applier over `store`, logging to `logger`, with at most `parallelism` store calls under way.
    public init(store: any Store, logger: Logger, parallelism: Int = Parallelism.default) {
        self.store = store
        self.logger = logger
        self.parallelism = max(1, parallelism)
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
        let parts = plan.ownerParts
        guard parts.count > 1 else { return try await applyPart(plan, progress: progress) }
        return await applyOwners(parts, of: plan, progress: progress)
    }

    /// Applies a plan of one owner's zones as that owner; `known`: record names of users signed in before,
    /// by normalized email address.
    func applyPart(
        _ plan: Plan, progress: (@Sendable (ApplyProgress) -> Void)?, known: [String: UserRecordName] = [:]
    ) async throws -> ApplyReport {
        var run = ApplyRun(plan: plan, store: store, logger: logger, progress: progress, parallelism: parallelism)
        run.newUserRecordNames = known
        // Waits of the store's calls (throttled, unavailable, a lost connection) show on the progress line, and
        // still reach whoever listened before.
        let listener: StoreRetryListener?
        if let progress {
            let (outer, reporter) = (StoreRetryListener.current, run.waitReporter(progress))
            listener = StoreRetryListener { wait in
                outer?.hear(wait)
                reporter(wait)
            }
        } else {
            listener = StoreRetryListener.current
        }
        // The run goes in and comes back out by value, so the operation changes nothing of the caller's.
        run = await StoreRetryListener.$current.withValue(listener) { [run] in
            var run = run
            await run.execute()
            return run
        }
        store.finishedWriting()
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
}
