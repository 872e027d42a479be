import Emulator
import Foundation

/// A clock that a test moves forward by hand, so that token expiry is tested without waiting.
public final class MovableClock: @unchecked Sendable {
    private let lock = NSLock()
    private let start = ContinuousClock.now
    private var elapsed: Duration = .zero

    public init() {}

    /// Moves the clock forward.
    public func advance(by duration: Duration) { lock.withLock { elapsed += duration } }

    /// The clock as the emulator reads it.
    public var emulatorClock: EmulatorClock {
        EmulatorClock { [self] in lock.withLock { start + elapsed } }
    }
}
