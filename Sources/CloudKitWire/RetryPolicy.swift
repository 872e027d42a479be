import ShareKit

/// How often and how long a `WebServicesStore` waits and retries `THROTTLED`, `TRY_AGAIN_LATER`, 429 and 503:
/// the one policy of the transport, for a whole request (`WebServicesTransport.attempt`) and for the
/// operations of a `records/modify` that came back with those codes (`WebServicesStore.modifyChunk`).
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included.
    public var maxAttempts: Int
    /// The wait before the second attempt when the server gives no `retryAfter`; doubled each time.
    public var baseDelay: Double
    /// No wait is longer than this, whatever `retryAfter` says.
    public var maxDelay: Double

    public init(maxAttempts: Int = 5, baseDelay: Double = 0.5, maxDelay: Double = 30) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// The wait in seconds before attempt `attempt + 1` (attempt counts from 1).
    public func delay(afterAttempt attempt: Int, retryAfter: Double?) -> Double {
        let backoff = baseDelay * Double(1 << min(attempt - 1, 20))
        return min(maxDelay, max(0, retryAfter ?? backoff))
    }

    /// The wait before attempt `attempt + 1`, or nil when the attempts are spent.
    public func nextWait(afterAttempt attempt: Int, retryAfter: Double?) -> Double? {
        attempt < maxAttempts ? delay(afterAttempt: attempt, retryAfter: retryAfter) : nil
    }

    /// The codes that mean "wait, and send it again": CloudKit's throttling and its passing unavailability.
    public static func isRetryable(_ code: ServerErrorCode?) -> Bool {
        code == .throttled || code == .tryAgainLater
    }

    /// Whether an HTTP answer asks to be sent again: 429 and 503, or a retryable `serverErrorCode`.
    public static func isRetryable(status: Int, code: ServerErrorCode?) -> Bool {
        status == 429 || status == 503 || isRetryable(code)
    }
}
