/// `serve --throttle`'s count: a sliding window for each caller, which admits a request while fewer than
/// `rate.requests` were admitted in the `rate.window` before it.
///
/// A sliding window rather than a token bucket: a bucket lets a burst of its whole size through at once after
/// a quiet spell, while a window never admits more than the rate in any second, which is the simpler promise
/// to test a client against. Refused requests are not counted, so a client that waits the `retryAfter` it
/// was given gets through.
struct RequestWindows: Sendable {
    let rate: RequestRate
    /// The times of the requests each caller was admitted within the last window, oldest first.
    private var admitted: [String: [ContinuousClock.Instant]] = [:]
    /// Admissions since callers with empty windows were last forgotten.
    private var sincePrune = 0

    init(rate: RequestRate) {
        self.rate = rate
    }

    /// Admits a request of `caller` at `now` (nil), or says how long until it would be admitted.
    mutating func admit(_ caller: String, at now: ContinuousClock.Instant) -> Duration? {
        let window = rate.window.duration
        let start = now - window
        var times = admitted[caller] ?? []
        if let kept = times.firstIndex(where: { $0 > start }) {
            times.removeFirst(kept)
        } else {
            times.removeAll()
        }
        guard times.count < rate.requests else {
            admitted[caller] = times
            // A place frees when the oldest admitted request leaves the window.
            return times[0] + window - now
        }
        times.append(now)
        admitted[caller] = times
        sincePrune += 1
        if sincePrune >= 10_000 { prune(before: start) }
        return nil
    }

    /// Forgets callers that sent nothing within the window, so that many one-off callers do not grow the server.
    private mutating func prune(before start: ContinuousClock.Instant) {
        sincePrune = 0
        admitted = admitted.filter { $0.value.last.map { $0 > start } ?? false }
    }

    /// A wait as CloudKit's `retryAfter`: whole seconds, at least one.
    static func retryAfterSeconds(_ wait: Duration) -> Int {
        let (seconds, attoseconds) = wait.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }
}
