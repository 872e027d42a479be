import Foundation
import PlanModel
import Synchronization
import ShareKit

/// How far an apply has come, reported after each store call, and when a store call waits to send a request
/// again (`waiting`).
public struct ApplyProgress: Sendable, Hashable {
    /// Changes done or failed so far.
    public var completed: Int
    /// Changes in the plan.
    public var total: Int
    /// What was just done (`saved 200 records in FamilyLists`), or what is waited for (`throttled, retrying in
    /// 3 s`).
    public var message: String
    /// Set while a store call waits before it sends a request again: the service asked it to (throttled,
    /// unavailable) or the connection was lost. A long wait is worth saying on the terminal.
    public var waiting: StoreRetry?

    public init(completed: Int, total: Int, message: String, waiting: StoreRetry? = nil) {
        self.completed = completed
        self.total = total
        self.message = message
        self.waiting = waiting
    }
}

/// The count of changes done so far, read by the wait reports of store calls running in child tasks.
final class CompletedChanges: Sendable {
    private let count = Mutex(0)

    var value: Int {
        get { count.withLock { $0 } }
        set { count.withLock { $0 = newValue } }
    }
}
