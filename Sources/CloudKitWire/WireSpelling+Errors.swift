import Foundation
import ShareKit

// The words of errors and of request paths: error codes and their HTTP statuses, databases, environments.
// Spelled here, by hand, for the reason `WireSpelling+Records.swift` gives.
extension WireSpelling {
    // MARK: - Reasons

    /// The signed-in user an emulator's answer is for.
    package struct Addressee: Sendable {
        package var recordName: UserRecordName
        package var email: String

        package init(recordName: UserRecordName, email: String) {
            self.recordName = recordName
            self.email = email
        }
    }

    /// The user the answers written in this task are for, where an emulator set it; nil in a client.
    @TaskLocal package static var addressee: Addressee?

    /// A refusal's reason as the wire carries it: the user it is for named by the email they signed in with,
    /// not by a user record name (`_1c4eb67…`), which reads as noise in a test's failure. Only the addressee's
    /// own name: no one learns another user's email from a refusal.
    package static func reason(of error: ShareError) -> String {
        guard let addressee, error.reason.contains(addressee.recordName) else { return error.reason }
        return error.reason.replacingOccurrences(of: addressee.recordName, with: addressee.email)
    }

    // MARK: - Error codes

    /// A `serverErrorCode`.
    public static func errorCode(_ code: ServerErrorCode) -> String {
        switch code {
        case .accessDenied: "ACCESS_DENIED"
        case .atomicError: "ATOMIC_ERROR"
        case .authenticationFailed: "AUTHENTICATION_FAILED"
        case .authenticationRequired: "AUTHENTICATION_REQUIRED"
        case .badRequest: "BAD_REQUEST"
        case .conflict: "CONFLICT"
        case .exists: "EXISTS"
        case .internalError: "INTERNAL_ERROR"
        case .notFound: "NOT_FOUND"
        case .quotaExceeded: "QUOTA_EXCEEDED"
        case .throttled: "THROTTLED"
        case .tryAgainLater: "TRY_AGAIN_LATER"
        case .validatingReferenceError: "VALIDATING_REFERENCE_ERROR"
        case .zoneNotFound: "ZONE_NOT_FOUND"
        }
    }

    /// Reads a `serverErrorCode`; nil for any other word.
    public static func errorCode(_ word: String) -> ServerErrorCode? {
        ServerErrorCode.allCases.first { errorCode($0) == word }
    }

    // MARK: - Paths

    /// A database as a request's path names it: `private`, `shared`, `public`.
    public static func database(_ scope: DatabaseScope) -> String {
        switch scope {
        case .private: "private"
        case .shared: "shared"
        case .public: "public"
        }
    }

    /// Reads a database from a request's path; nil for any other word.
    public static func database(_ word: String) -> DatabaseScope? {
        DatabaseScope.allCases.first { database($0) == word }
    }

    /// A database as share metadata's `databaseScope` names it: `PRIVATE`, `SHARED`, `PUBLIC`.
    public static func metadataDatabaseScope(_ scope: DatabaseScope) -> String {
        switch scope {
        case .private: "PRIVATE"
        case .shared: "SHARED"
        case .public: "PUBLIC"
        }
    }

    /// A database as a notification payload's `dbs` numbers it (`CKDatabaseScope`): 1 public, 2 private,
    /// 3 shared.
    public static func databaseScopeNumber(_ scope: DatabaseScope) -> Int {
        switch scope {
        case .public: 1
        case .private: 2
        case .shared: 3
        }
    }

    /// Reads a payload's `dbs` number; nil for any other number.
    public static func databaseScope(number: Int) -> DatabaseScope? {
        DatabaseScope.allCases.first { databaseScopeNumber($0) == number }
    }

    /// An environment as a request's path (and a sign-in's body) names it: `development`, `production`.
    public static func environment(_ environment: CloudKitEnvironment) -> String {
        switch environment {
        case .development: "development"
        case .production: "production"
        }
    }

    /// Reads an environment; nil for any other word.
    public static func environment(_ word: String) -> CloudKitEnvironment? {
        CloudKitEnvironment.allCases.first { environment($0) == word }
    }

    // MARK: - HTTP statuses

    /// The HTTP status Web Services answers with for an error code.
    public static func httpStatus(_ code: ServerErrorCode) -> Int {
        switch code {
        case .accessDenied: 403
        case .atomicError, .badRequest: 400
        case .authenticationFailed: 401
        case .authenticationRequired: 421
        case .conflict, .exists: 409
        case .internalError: 500
        case .notFound, .zoneNotFound: 404
        case .quotaExceeded: 413
        case .throttled: 429
        case .tryAgainLater: 503
        case .validatingReferenceError: 412
        }
    }

    /// The error code of an answer that carries none but its HTTP status (a proxy's, or a bare 5xx): the
    /// general code where several share a status (400 is `BAD_REQUEST`, 404 `NOT_FOUND`, 409 `CONFLICT`).
    public static func code(httpStatus: Int) -> ServerErrorCode {
        switch httpStatus {
        case 400: .badRequest
        case 404: .notFound
        case 409: .conflict
        default: ServerErrorCode.allCases.first { self.httpStatus($0) == httpStatus } ?? .internalError
        }
    }
}
