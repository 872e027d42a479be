/// A store call that waits before it sends a request again: the service asked it to wait (throttled, or
/// unavailable for a moment), or the connection was lost or could not be made.
///
/// A store over the network says so to whoever listens (`StoreRetryListener.current`, a task-local value, so
/// that the calls an apply makes in its child tasks report to the apply's progress), and keeps going; a local
/// store never waits.
public struct StoreRetry: Sendable, Hashable, CustomStringConvertible {
    /// Why the request is sent again.
    public enum Reason: String, Sendable, Hashable, Codable {
        /// `429` or `THROTTLED`: the caller sent more than its share.
        case throttled
        /// `503` or `TRY_AGAIN_LATER`: the service is unavailable for a moment.
        case unavailable
        /// The connection closed after the request went out, before an answer came: it may or may not have
        /// been applied.
        case connectionLost = "connection-lost"
        /// The connection could not be made: nothing reached the service.
        case unreachable
    }

    public var reason: Reason
    /// Seconds until the next attempt.
    public var seconds: Double
    /// The attempt about to be made (2 for the first retry).
    public var attempt: Int
    /// What is sent again (`records/modify`), never with its query: no token.
    public var operation: String

    public init(reason: Reason, seconds: Double, attempt: Int, operation: String) {
        self.reason = reason
        self.seconds = seconds
        self.attempt = attempt
        self.operation = operation
    }

    /// `throttled, retrying in 3 s`: a person's words for the wait.
    public var description: String {
        let what: String =
            switch reason {
            case .throttled: "throttled"
            case .unavailable: "service unavailable"
            case .connectionLost: "connection lost"
            case .unreachable: "cannot reach the service"
            }
        let wait = seconds < 1 ? "under a second" : "\(Int(seconds.rounded())) s"
        return "\(what), retrying in \(wait)"
    }

    /// Tells this task's listener (`StoreRetryListener.current`), if any, of the wait.
    public func tell() { StoreRetryListener.current?.hear(self) }
}

/// Who hears of each wait of the store calls made in a task and its child tasks: `StoreRetryListener.current`,
/// a task-local value (a class: a task-local of a function type crashed when pushed in release builds of
/// Swift 6.3, its type's metadata read as null).
public final class StoreRetryListener: Sendable {
    private let listener: @Sendable (StoreRetry) -> Void

    public init(_ listener: @escaping @Sendable (StoreRetry) -> Void) {
        self.listener = listener
    }

    public func hear(_ retry: StoreRetry) { listener(retry) }

    /// The listener of the store calls made in this task; nil: nobody listens.
    @TaskLocal public static var current: StoreRetryListener?
}
