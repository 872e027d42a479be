import Foundation
import Synchronization

/// A request, from outside a run, that it stop: what a first Ctrl-C asks of an apply, a destroy or a lane
/// (Docs/Plans.md, "Stopping an apply"). Nothing new starts once it is made; the calls under way finish and
/// are accounted for, and the run reports what it did and did not do.
///
/// The run reads it from the task it runs on (`StopRequest.current`): the command line binds one around an
/// apply, and the loops that start store calls (the applier's, and a store's own batches of one call) ask it
/// before each new one.
public final class StopRequest: Sendable {
    @TaskLocal public static var current: StopRequest?

    /// The reason an apply stopped this way gives in its report (`ApplyReport.stopped`).
    public static let reason = "a signal (Ctrl-C or SIGTERM) asked the apply to stop"

    private struct State {
        var requested = false
        var calls = 0
        var watchers: [Int: @Sendable () -> Void] = [:]
        var nextWatcher = 0
    }
    private let state = Mutex(State())

    public init() {}

    /// Whether the run was asked to stop.
    public var isRequested: Bool { state.withLock { $0.requested } }

    /// Asks the run to stop. Returns how many store calls were under way then.
    @discardableResult
    public func request() -> Int {
        let (calls, watchers) = state.withLock { state in
            state.requested = true
            return (state.calls, Array(state.watchers.values))
        }
        for watcher in watchers { watcher() }
        return calls
    }

    /// Calls `body` when the stop is requested (at once when it already was), for work that must be told
    /// rather than asked: a program a lane step runs, which is interrupted with it.
    /// - Returns: what `forget(_:)` takes once the work is over.
    public func whenRequested(_ body: @escaping @Sendable () -> Void) -> Int {
        let (id, already) = state.withLock { state in
            state.nextWatcher += 1
            state.watchers[state.nextWatcher] = body
            return (state.nextWatcher, state.requested)
        }
        if already { body() }
        return id
    }

    /// Stops calling what `whenRequested(_:)` was given.
    public func forget(_ id: Int) {
        _ = state.withLock { $0.watchers.removeValue(forKey: id) }
    }

    /// Runs one store call, counted as under way while it runs.
    public func during<Value>(_ call: () async throws -> Value) async rethrows -> Value {
        state.withLock { $0.calls += 1 }
        defer { state.withLock { $0.calls -= 1 } }
        return try await call()
    }

    /// Whether the run bound to the current task was asked to stop.
    public static var isRequestedNow: Bool { current?.isRequested ?? false }
}
