import CloudKitWire
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

    /// How far the clock was moved, in seconds.
    public var secondsMoved: Double {
        lock.withLock { Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18 }
    }

    /// The clock as the emulator reads it.
    public var emulatorClock: EmulatorClock {
        EmulatorClock { [self] in lock.withLock { start + elapsed } }
    }

    /// The clock as a `WebServicesStore` waits out its retries on it: a wait moves this clock forward by its
    /// length and goes on at once, so a client honours `retryAfter` waits of whole seconds (and the emulator's
    /// throttle, on `emulatorClock`, sees that time pass) without the test spending them.
    public var retryClock: RetryClock {
        RetryClock { [self] seconds in
            advance(by: .nanoseconds(Int64(max(0, seconds) * 1e9)))
            await Task.yield()
        }
    }
}
