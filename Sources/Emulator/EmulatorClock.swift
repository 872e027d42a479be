/// Where the emulator reads the time that web auth tokens expire by and `serve --throttle` counts by, and
/// sleeps `serve --latency`'s waits on: the system's clock, or one a test moves forward (so that expiry is
/// tested without waiting).
public struct EmulatorClock: Sendable {
    public let now: @Sendable () -> ContinuousClock.Instant
    /// Suspends the calling task (never blocking a thread) for a duration; throws when the task is cancelled.
    public let sleep: @Sendable (Duration) async throws -> Void

    public init(
        now: @escaping @Sendable () -> ContinuousClock.Instant,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await ContinuousClock().sleep(for: $0) }
    ) {
        self.now = now
        self.sleep = sleep
    }

    /// The system's clock.
    public static let system = EmulatorClock { ContinuousClock.now }
}
