/// How often and how long a `WebServicesStore` waits and retries `THROTTLED`, `TRY_AGAIN_LATER` and 503.
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
}
