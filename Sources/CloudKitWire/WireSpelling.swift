import ShareKit

/// Every word that CloudKit Web Services spells in a way of its own, in one place.
///
/// Apple's sources disagree on a few spellings (CLOUDKIT.md): Web Services and CKTool JS write participant
/// types `USER` and acceptance `INVITED`, CloudKit JS writes `PRIVATE_USER` and `PENDING`. sharelane writes
/// the Web Services form and reads both.
public enum WireSpelling {
    /// The header that carries the next web auth token in every response (CloudKit JS reads it from here).
    public static let webAuthTokenHeader = "X-Apple-CloudKit-Web-Auth-Token"
    /// The query parameter that carries the API token.
    public static let apiTokenParameter = "ckAPIToken"
    /// The query parameter that carries the web auth token.
    public static let webAuthTokenParameter = "ckWebAuthToken"
    /// Server-to-server signing headers.
    public static let keyIDHeader = "X-Apple-CloudKit-Request-KeyID"
    public static let dateHeader = "X-Apple-CloudKit-Request-ISO8601Date"
    public static let signatureHeader = "X-Apple-CloudKit-Request-SignatureV1"
    /// The share's title field.
    public static let shareTitleField = "cloudkit.title"
    /// The path every database request starts with, before the container.
    public static let databasePathPrefix = "/database/1"
    /// The emulator's sign-in path (not part of Apple's service, which signs in through a browser).
    public static let signInPath = "/auth/signin"

    /// The participant type written for a role.
    public static func participantType(_ role: ParticipantRole) -> String { role.rawValue }

    /// Reads a participant type in either spelling.
    public static func participantRole(_ word: String) -> ParticipantRole? { ParticipantRole(name: word) }

    /// The acceptance status written for a status.
    public static func acceptanceStatus(_ status: AcceptanceStatus) -> String { status.rawValue }

    /// Reads an acceptance status in either spelling.
    public static func acceptance(_ word: String) -> AcceptanceStatus? { AcceptanceStatus(name: word) }
}
