/// CloudKit's `serverErrorCode` values.
public enum ServerErrorCode: String, Sendable, Hashable, Codable, CaseIterable {
    case accessDenied = "ACCESS_DENIED"
    case atomicError = "ATOMIC_ERROR"
    case authenticationFailed = "AUTHENTICATION_FAILED"
    case authenticationRequired = "AUTHENTICATION_REQUIRED"
    case badRequest = "BAD_REQUEST"
    case conflict = "CONFLICT"
    case exists = "EXISTS"
    case internalError = "INTERNAL_ERROR"
    case notFound = "NOT_FOUND"
    case quotaExceeded = "QUOTA_EXCEEDED"
    case throttled = "THROTTLED"
    case tryAgainLater = "TRY_AGAIN_LATER"
    case validatingReferenceError = "VALIDATING_REFERENCE_ERROR"
    case zoneNotFound = "ZONE_NOT_FOUND"
}

/// A refusal or failure from a store, with CloudKit's error code and a reason a person can act on.
public struct ShareError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    public var code: ServerErrorCode
    public var reason: String
    /// The record, zone or share the error is about, when there is one.
    public var subject: String?
    /// Seconds to wait before retrying (`THROTTLED`, `TRY_AGAIN_LATER`).
    public var retryAfter: Double?
    /// What the store knows beyond what the caller may be told: why a zone or record the caller may not know
    /// of answered as a missing one ("carol is not a participant of any share of alice's zone Lists"), for
    /// whoever runs the store (the emulator's console). Never sent to a client: `reason` is the same whether the
    /// thing is missing or hidden (`AccessRules.unknownZone`).
    public var insight: String?

    public init(
        _ code: ServerErrorCode, _ reason: String, subject: String? = nil, retryAfter: Double? = nil,
        insight: String? = nil
    ) {
        self.code = code
        self.reason = reason
        self.subject = subject
        self.retryAfter = retryAfter
        self.insight = insight
    }

    public var description: String {
        if let subject { return "\(code.rawValue): \(subject): \(reason)" }
        return "\(code.rawValue): \(reason)"
    }
}
