import Foundation
import ShareKit

/// A request-level error body: `{uuid, serverErrorCode, reason, redirectURL?, retryAfter?}`. An error whose
/// reason is empty is written without `reason`, as the live service answers a GET `users/discover` (500
/// `{uuid, serverErrorCode}`).
package struct WireError: Codable, Sendable, Hashable {
    package var uuid: String?
    package var serverErrorCode: String
    package var reason: String?
    package var redirectURL: String?
    package var retryAfter: Double?

    package init(_ error: ShareError, redirectURL: String? = nil) {
        uuid = Self.newUUID()
        serverErrorCode = WireSpelling.errorCode(error.code)
        reason = error.reason.isEmpty ? nil : WireSpelling.reason(of: error)
        self.redirectURL = redirectURL
        retryAfter = error.retryAfter
    }

    /// This error as a `ShareError`, keeping the code and the reason.
    package func shareError(subject: String?) -> ShareError {
        Self.shareError(code: serverErrorCode, reason: reason, subject: subject, retryAfter: retryAfter)
    }

    static func newUUID() -> String { UUID().uuidString.lowercased() }

    /// Maps a `serverErrorCode` and `reason` to a `ShareError`.
    ///
    /// An unknown code becomes `INTERNAL_ERROR` with the code kept in the reason. A production schema that
    /// lacks the `cloudkit.share` type gets its remedy spelled out.
    static func shareError(code: String, reason: String?, subject: String?, retryAfter: Double?) -> ShareError {
        var text = reason ?? "no reason given"
        let known = WireSpelling.errorCode(code)
        if known == nil { text = "\(code): \(text)" }
        if text.contains(shareRecordType), text.lowercased().contains("production") {
            text +=
                " — the production schema has no \(shareRecordType) record type. Create a share once in the "
                + "development environment, then deploy the development schema to production in CloudKit "
                + "Console (Schema → Deploy Schema Changes), and apply again."
        }
        return ShareError(known ?? .internalError, text, subject: subject, retryAfter: retryAfter)
    }
}
