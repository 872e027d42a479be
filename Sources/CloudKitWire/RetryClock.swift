/// What a `WebServicesStore` waits out its retries on: the system's clock, or one a test moves forward, so
/// that a test meets `retryAfter` waits of whole seconds without spending them (as `EmulatorClock` is the
/// emulator's).
public struct RetryClock: Sendable {
    /// Suspends the calling task for this many seconds; throws when the task is cancelled.
    public let sleep: @Sendable (Double) async throws -> Void

    public init(sleep: @escaping @Sendable (Double) async throws -> Void) {
        self.sleep = sleep
    }

    /// The system's clock.
    public static let system = RetryClock { seconds in
        try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
    }
}
