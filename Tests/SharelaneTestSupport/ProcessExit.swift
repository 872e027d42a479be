import Foundation

/// A Foundation `Process`'s end as something a test awaits.
///
/// The process's `terminationHandler` resumes whoever waits, so no thread sleeps or polls `isRunning` while
/// the process runs: an async test that waits holds none of the cooperative pool's threads, which the
/// in-process emulators of other tests answer on (a 2-core machine has two).
public final class ProcessExit: @unchecked Sendable {
    private let lock = NSCondition()
    private var status: Int32?
    private var waiters: [UUID: CheckedContinuation<Int32?, Never>] = [:]

    /// Watches `process`; make it before `process.run()`, as it sets the process's `terminationHandler`.
    public init(_ process: Process) {
        process.terminationHandler = { [self] process in finish(process.terminationStatus) }
    }

    /// Whether the process has ended.
    public var hasEnded: Bool { lock.withLock { status != nil } }

    /// Waits for the process's end, up to `limit`.
    ///
    /// - Returns: its termination status, or nil when `limit` passed first (the process goes on running).
    public func status(within limit: Duration) async -> Int32? {
        await withTaskGroup(of: Int32?.self) { group in
            group.addTask { await self.end() }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? lock.withLock { status }
        }
    }

    /// Checks `condition` while the process runs, up to `limit`, without holding a thread meanwhile.
    ///
    /// - Returns: whether the condition held (checked once more after the process ended).
    public func waitWhileRunning(within limit: Duration, until condition: () -> Bool) async -> Bool {
        await TestDeadlines.poll(within: limit) { condition() || hasEnded } && condition()
    }

    /// Waits for the process's end, up to `limit`, blocking the calling thread: for code that cannot await
    /// (a synchronous test, a `deinit`).
    ///
    /// - Returns: its termination status, or nil when `limit` passed first.
    public func statusBlocking(within limit: Duration) -> Int32? {
        let (seconds, attoseconds) = limit.components
        let deadline = Date().addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
        return lock.withLock {
            while status == nil, lock.wait(until: deadline) {}
            return status
        }
    }

    /// `waitWhileRunning` for code that cannot await (a synchronous test): the calling thread waits on the
    /// process's end between checks, so it wakes as soon as the process ends.
    ///
    /// - Returns: whether the condition held (checked once more after the process ended).
    public func waitWhileRunningBlocking(
        within limit: Duration, every interval: Duration = .milliseconds(50), until condition: () -> Bool
    ) -> Bool {
        let deadline = ContinuousClock.now + limit
        while !condition(), ContinuousClock.now < deadline, statusBlocking(within: interval) == nil {}
        return condition()
    }

    /// Waits for the end; nil when the waiting task is cancelled first.
    private func end() async -> Int32? {
        let id = UUID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now: Int32?? = lock.withLock {
                    if let status { return .some(status) }
                    if Task.isCancelled { return .some(nil) }
                    waiters[id] = continuation
                    return .none
                }
                if case .some(let result) = now { continuation.resume(returning: result) }
            }
        } onCancel: {
            lock.withLock { waiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }

    private func finish(_ code: Int32) {
        let waiting: [CheckedContinuation<Int32?, Never>]? = lock.withLock {
            guard status == nil else { return nil }
            status = code
            lock.broadcast()
            defer { waiters = [:] }
            return Array(waiters.values)
        }
        for waiter in waiting ?? [] { waiter.resume(returning: code) }
    }
}
