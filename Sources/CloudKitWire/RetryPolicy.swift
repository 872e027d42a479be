import ShareKit

/// When a `WebServicesStore` sends a request again, and how long it waits first: the one policy of the
/// transport, for a whole request (`WebServicesTransport.attempt`), for the operations of a `records/modify`
/// that came back with `THROTTLED` or `TRY_AGAIN_LATER` (`WebServicesStore.modifyChunk`), for asset bytes, and
/// for connections that could not be made.
///
/// - `THROTTLED`, `TRY_AGAIN_LATER`, 429 and 503 are sent again after the answer's `retryAfter`, never sooner,
///   plus up to a quarter more (so that callers throttled together do not come back together); without a
///   `retryAfter`, after a backoff of `baseDelay` doubling up to `maxDelay`, with the same jitter.
/// - A connection that closed after the request went out (reset, or the answer lost) is sent again after the
///   backoff: the request may have been applied, which the caller settles (`WebServicesStore`'s writes read
///   back what they sent; reads, sign-ins and accepts are the same when sent twice).
/// - At most `maxAttempts` attempts, and at most `totalWait` seconds of waiting for one request, its asset
///   uploads and throttled operations included (`RetryBudget`, one for all the loops that send part of it
///   again): a `retryAfter` beyond what is left ends the retries rather than being cut short. Then the caller
///   gets the last answer, or the error, and an apply stops.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included.
    public var maxAttempts: Int
    /// The wait before the second attempt when the server gives no `retryAfter`; doubled each time.
    public var baseDelay: Double
    /// The longest backoff wait (a `retryAfter` is honoured whole, within `totalWait`).
    public var maxDelay: Double
    /// The most one request waits in all, across its attempts.
    public var totalWait: Double

    /// The share of a wait added at random on top of it: a wait of `w` is drawn from `w…w × 1.25`.
    public static let jitter = 0.25

    /// The defaults stop a request the service keeps refusing within about 6 s (five waits of `retryAfter: 1`)
    /// and one whose connections keep closing within about 12 s (0.5, 1, 2, 4, 4 s), so that an apply that
    /// cannot go on says so in seconds; a `retryAfter` past 30 s in all ends the retries at once.
    public init(maxAttempts: Int = 6, baseDelay: Double = 0.5, maxDelay: Double = 4, totalWait: Double = 30) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(self.baseDelay, maxDelay)
        self.totalWait = max(0, totalWait)
    }

    /// The wait before attempt `attempt + 1` (attempt counts from 1), or nil when the request is not sent
    /// again: its attempts are spent, or the wait would take it past `totalWait` (`waited` is what it waited
    /// so far). `draw` is a number in `0..<1` that places the wait within its jitter.
    public func wait(afterAttempt attempt: Int, retryAfter: Double?, waited: Double, draw: Double) -> Double? {
        guard attempt < maxAttempts else { return nil }
        let floor = retryAfter.map { max(0, $0) } ?? backoff(afterAttempt: attempt)
        let wait = floor * (1 + Self.jitter * min(max(draw, 0), 1))
        // The floor must fit: never less than `retryAfter`; the jitter is trimmed to what is left.
        guard waited + floor <= totalWait else { return nil }
        return min(wait, totalWait - waited)
    }

    /// The backoff before attempt `attempt + 1` without a `retryAfter`: `baseDelay` doubling, at most
    /// `maxDelay`.
    public func backoff(afterAttempt attempt: Int) -> Double {
        min(maxDelay, baseDelay * Double(1 << min(max(attempt - 1, 0), 20)))
    }

    /// The wait before trying again to connect to a service that refused or did not answer the connection
    /// (`connectAttempts` so far): 0.25 s doubling, at most 2 s, with the same jitter. Such retries are bounded
    /// by time, the reach timeout (`--timeout`), not by attempts.
    public static func reachWait(afterAttempt connectAttempts: Int, draw: Double) -> Double {
        min(2, 0.25 * Double(1 << min(max(connectAttempts - 1, 0), 8))) * (1 + jitter * min(max(draw, 0), 1))
    }

    /// The codes that mean "wait, and send it again": CloudKit's throttling and its passing unavailability.
    public static func isRetryable(_ code: ServerErrorCode?) -> Bool {
        code == .throttled || code == .tryAgainLater
    }

    /// Whether an HTTP answer asks to be sent again: 429 and 503, or a retryable `serverErrorCode`.
    public static func isRetryable(status: Int, code: ServerErrorCode?) -> Bool {
        status == 429 || status == 503 || isRetryable(code)
    }

    /// Why an answer is sent again, in a person's words (`StoreRetry.Reason`): throttled or unavailable.
    static func reason(status: Int? = nil, code: ServerErrorCode?) -> StoreRetry.Reason {
        status == 429 || code == .throttled ? .throttled : .unavailable
    }

    /// Why the operations of one answer that failed with `codes` are sent again: throttled when any was.
    static func reason(codes: [ServerErrorCode?]) -> StoreRetry.Reason {
        codes.contains { reason(code: $0) == .throttled } ? .throttled : .unavailable
    }
}
