import Foundation
import Synchronization
import ShareKit

/// What one request of a `WebServicesStore` may still spend on sending again: its attempts and its seconds of
/// waiting (`RetryPolicy.maxAttempts`, `totalWait`), shared by every loop that sends part of it again. A
/// `records/modify` sends its asset bytes, the request, and the operations the service throttled; each loop
/// spends from the one budget, so the request as a whole waits at most `totalWait`, never a loop's budget on top
/// of another's.
///
/// The budget of the request being sent is a task-local value (`current`): the transport takes it when a
/// caller opened one (`WebServicesStore.modifyChunk`, an asset's upload) and opens its own otherwise.
final class RetryBudget: Sendable {
    let policy: RetryPolicy
    private let state = Mutex((attempts: 1, waited: 0.0))

    init(_ policy: RetryPolicy) { self.policy = policy }

    /// The wait before sending again (after `retryAfter`, never sooner; else the backoff), counted against the
    /// budget; nil when the attempts or the seconds are spent, or the wait would not fit.
    func spend(retryAfter: Double?) -> (wait: Double, attempt: Int)? {
        state.withLock { state in
            guard
                let wait = policy.wait(
                    afterAttempt: state.attempts, retryAfter: retryAfter, waited: state.waited,
                    draw: Double.random(in: 0..<1))
            else { return nil }
            state.attempts += 1
            state.waited += wait
            return (wait, state.attempts)
        }
    }

    /// The attempts made so far, the first included, and the seconds waited.
    var spent: (attempts: Int, waited: Double) { state.withLock { $0 } }

    /// How the retries ended when the last answer still asks for another: `gave up after 6 attempts and 5.6 s
    /// of waiting`, and why when the attempts were not all spent.
    func gaveUp(nextRetryAfter: Double?) -> String {
        let (attempts, waited) = spent
        return "gave up after \(attempts) attempt\(attempts == 1 ? "" : "s") and "
            + "\(String(format: "%.1f", waited)) s of waiting"
            + (attempts < policy.maxAttempts
                ? " (the next wait, \(String(format: "%.0f", nextRetryAfter ?? 0)) s, was past the retry budget)" : "")
    }

    /// The budget of the request this task is sending, if a caller opened one.
    @TaskLocal static var current: RetryBudget?

    /// Runs `body` within the task's budget, or within a new one of `policy` when none is open.
    static func sharing<T>(_ policy: RetryPolicy, _ body: (RetryBudget) async throws -> T) async throws -> T {
        if let current { return try await body(current) }
        return try await opening(policy, body)
    }

    /// Runs `body` within a new budget of `policy`: one request, whatever budget the caller's task holds.
    static func opening<T>(_ policy: RetryPolicy, _ body: (RetryBudget) async throws -> T) async throws -> T {
        let budget = RetryBudget(policy)
        return try await $current.withValue(budget) { try await body(budget) }
    }
}
