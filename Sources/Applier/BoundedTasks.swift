import PlanModel
import ShareKit

/// Runs work a few items at a time: the one way the planner and the applier overlap store calls.
package enum BoundedTasks {
    /// Starts `work` for each of `items`, at most `limit` at a time, while `keepGoing` says so, and hands
    /// each item's value to `receive` as it finishes (in the order they finish), on the caller's task, one at
    /// a time: `receive` may change the caller's state. When `receive` throws, nothing more starts, the work
    /// under way is cancelled, and the error is thrown once the group has finished.
    package static func run<Item: Sendable, Value: Sendable, Failure: Error>(
        _ items: [Item], limit: Int, while keepGoing: () -> Bool = { true },
        work: @escaping @Sendable (Item) async -> Value,
        receive: (Item, Value) async throws(Failure) -> Void
    ) async throws(Failure) {
        var pending = items[...]
        try await run(limit: limit, next: { keepGoing() ? pending.popFirst() : nil }, work: work, receive: receive)
    }

    /// The same, with each item made on the caller's task just before it starts (`next`; nil when there
    /// is nothing more to start), so that making it may read what earlier items' values changed.
    package static func run<Item: Sendable, Value: Sendable, Failure: Error>(
        limit: Int, next: () -> Item?,
        work: @escaping @Sendable (Item) async -> Value,
        receive: (Item, Value) async throws(Failure) -> Void
    ) async throws(Failure) {
        var failure: Failure?
        await withTaskGroup(of: (Item, Value).self) { group in
            var inFlight = 0
            var exhausted = false
            while true {
                while inFlight < limit, failure == nil, !exhausted {
                    guard let item = next() else {
                        exhausted = true
                        break
                    }
                    group.addTask {
                        // Counted as a call under way where a run may be asked to stop (`StopRequest`).
                        guard let stop = StopRequest.current else { return (item, await work(item)) }
                        return (item, await stop.during { await work(item) })
                    }
                    inFlight += 1
                }
                guard let (item, value) = await group.next() else { break }
                inFlight -= 1
                guard failure == nil else { continue }
                do throws(Failure) {
                    try await receive(item, value)
                } catch {
                    failure = error
                    group.cancelAll()
                }
            }
        }
        if let failure { throw failure }
    }

    /// What a throwing call gave: its value or its error.
    package static func result<Value>(_ call: () async throws -> Value) async -> Result<Value, any Error> {
        do {
            return .success(try await call())
        } catch {
            return .failure(error)
        }
    }
}
