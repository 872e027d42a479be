import Foundation
import ShareKit
import Synchronization

/// The network conditions in force in a running `sharelane serve`, and what they decide for each request in
/// the order requests arrive: its wait and its fault (from the seeded draws), and whether its caller is over
/// the throttle. One per emulator, shared by `NetworkFaultMiddleware`, `POST /_sharelane/faults` (which changes
/// it while the server runs) and the console (which shows it).
///
/// A mutex, not an actor: every decision is a few arithmetic steps, and taking them under one lock keeps the
/// draws in arrival order without a suspension point between arriving and drawing.
final class NetworkFaults: Sendable {
    /// What the conditions decided for one request when it arrived.
    struct Draw: Sendable, Equatable {
        /// The fault the request meets; nil for none.
        var fault: NetworkFault?
        /// How long its answer waits.
        var delay: Duration
        /// Whether a throttle is in force (its caller is then counted with `admit`).
        var throttled: Bool
    }

    /// The time the throttle counts by and the latency sleeps on.
    let clock: EmulatorClock
    private struct State {
        var conditions: NetworkConditions
        /// Which request meets which fault; apart from `jitter`, so that the faults a seed gives are the same
        /// with jitter or without.
        var faultDraws: SplitMix64
        var jitterDraws: SplitMix64
        var windows: RequestWindows?

        init(_ conditions: NetworkConditions) {
            self.conditions = conditions
            (faultDraws, jitterDraws) = NetworkFaults.generators(seed: conditions.seed)
            windows = conditions.throttle.map(RequestWindows.init(rate:))
        }
    }
    private let state: Mutex<State>

    init(_ conditions: NetworkConditions, clock: EmulatorClock) {
        self.clock = clock
        state = Mutex(State(conditions))
    }

    /// The conditions in force.
    var current: NetworkConditions { state.withLock { $0.conditions } }

    /// Puts `conditions` in force from the next request on: the draws start again from its seed (a new random
    /// one without), and every caller's throttle count from zero.
    func change(to conditions: NetworkConditions) {
        let fresh = State(conditions)
        state.withLock { $0 = fresh }
    }

    /// The next request's wait and fault, drawn in arrival order; nil when the network is good (the request
    /// passes untouched and its log line says nothing of faults).
    func draw() -> Draw? {
        state.withLock { state in
            let conditions = state.conditions
            guard !conditions.isGood else { return nil }
            var fault: NetworkFault?
            if !conditions.faults.isEmpty {
                fault = conditions.faults.fault(forDraw: state.faultDraws.below(10_000))
            }
            var milliseconds = 0
            if let latency = conditions.latency {
                let range = latency.range
                milliseconds = range.lowerBound + state.jitterDraws.below(range.count)
            }
            return Draw(fault: fault, delay: .milliseconds(milliseconds), throttled: conditions.throttle != nil)
        }
    }

    /// Counts a request of `caller` against the throttle: nil when admitted (or when no throttle is in force
    /// any more), else how long until it would be.
    func admit(_ caller: String) -> Duration? {
        let now = clock.now()
        return state.withLock { $0.windows?.admit(caller, at: now) }
    }

    /// The rate in force, for a refusal's reason.
    var throttle: RequestRate? { state.withLock { $0.conditions.throttle } }

    /// The fault draws start from `seed` itself; the jitter draws from a second seed derived from it, so that
    /// the two streams do not repeat each other.
    fileprivate static func generators(seed: UInt64?) -> (faults: SplitMix64, jitter: SplitMix64) {
        var system = SystemRandomNumberGenerator()
        let seed = seed ?? system.next()
        var derive = SplitMix64(seed: seed ^ 0x6A09_E667_F3BC_C909)
        return (SplitMix64(seed: seed), SplitMix64(seed: derive.next()))
    }
}

extension SplitMix64 {
    /// A number in `0..<bound` (the slight lean of a remainder toward small numbers does not matter for
    /// deciding which request meets which fault).
    fileprivate mutating func below(_ bound: Int) -> Int {
        bound <= 1 ? 0 : Int(next() % UInt64(bound))
    }
}
