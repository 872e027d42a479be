/// Where the emulator reads the time that web auth tokens expire by: the system's clock, or one a test
/// moves forward (so that expiry is tested without waiting).
public struct EmulatorClock: Sendable {
    public let now: @Sendable () -> ContinuousClock.Instant

    public init(now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.now = now
    }

    /// The system's clock.
    public static let system = EmulatorClock { ContinuousClock.now }
}
