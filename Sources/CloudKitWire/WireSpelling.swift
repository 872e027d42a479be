import ShareKit

/// Every word that CloudKit Web Services spells in a way of its own, in one place.
///
/// Apple's sources disagree on a few spellings (Docs/CloudKit.md, "Spellings and request keys"): Web Services and CKTool JS write participant
/// types `USER` and acceptance `INVITED`, CloudKit JS writes `PRIVATE_USER` and `PENDING`. sharelane writes
/// the Web Services form and reads both.
public enum WireSpelling {
    /// The header that carries the next web auth token in every response (CloudKit JS reads it from here).
    public static let webAuthTokenHeader = "X-Apple-CloudKit-Web-Auth-Token"
    /// The query parameter that carries the API token.
    public static let apiTokenParameter = "ckAPIToken"
    /// The query parameter that carries the web auth token.
    public static let webAuthTokenParameter = "ckWebAuthToken"
    /// The query parameter CloudKit JS 1.x sends beside `ckWebAuthToken`, also carrying the session.
    public static let sessionParameter = "ckSession"
    /// What CloudKit JS 1.x sends as `ckWebAuthToken` and `ckSession` while signed out: the literal word, as
    /// JavaScript writes a null in a URL. It names no user.
    public static let signedOutToken = "null"
    /// The `deviceID` of a record's `created` and `modified`: the reference's Record Dictionary has it and its
    /// example answers write it; serve does not know the device a write came from, and writes the one word
    /// for every write.
    public static let deviceID = "iCloud"
    /// Server-to-server signing headers.
    public static let keyIDHeader = "X-Apple-CloudKit-Request-KeyID"
    public static let dateHeader = "X-Apple-CloudKit-Request-ISO8601Date"
    public static let signatureHeader = "X-Apple-CloudKit-Request-SignatureV1"
    /// The path every database request starts with, before the container.
    public static let databasePathPrefix = "/database/1"
    /// The path the live service and CloudKit JS send `tokens/create|register` to, before the container.
    public static let devicePathPrefix = "/device/1"
    /// The path of `sharelane serve`'s webcourier long-poll (the `webcourierURL` of `tokens/create`); the
    /// token goes in the query (`tok`), which request logs never write.
    public static let webcourierPath = "/webcourier/aps"
    /// The emulator's sign-in path (not part of Apple's service, which signs in through a browser).
    public static let signInPath = "/auth/signin"
    /// The emulator's sign-in of many users in one request (`SignInBatchRequest`).
    public static let signInBatchPath = "/auth/signin/batch"

    // MARK: - Sharing words

    /// The participant type written for a role. Web Services and CKTool JS write `USER`, CloudKit JS
    /// `PRIVATE_USER`: sharelane writes the first and reads both.
    public static func participantType(_ role: ParticipantRole) -> String {
        switch role {
        case .owner: "OWNER"
        case .administrator: "ADMINISTRATOR"
        case .privateUser: "USER"
        case .publicUser: "PUBLIC_USER"
        }
    }

    /// Reads a participant type in either spelling; nil for any other word (a recipe's words included).
    public static func participantRole(_ word: String) -> ParticipantRole? {
        if word == "PRIVATE_USER" { return .privateUser }
        return ParticipantRole.allCases.first { participantType($0) == word }
    }

    /// The acceptance status written for a status. Web Services writes `INVITED`, CloudKit JS `PENDING`:
    /// sharelane writes the first and reads both.
    public static func acceptanceStatus(_ status: AcceptanceStatus) -> String {
        switch status {
        case .pending: "INVITED"
        case .accepted: "ACCEPTED"
        case .removed: "REMOVED"
        }
    }

    /// Reads an acceptance status in either spelling; nil for any other word.
    public static func acceptance(_ word: String) -> AcceptanceStatus? {
        if word == "PENDING" { return .pending }
        return AcceptanceStatus.allCases.first { acceptanceStatus($0) == word }
    }

    /// Every acceptance status word the reference documents for a participant (`UNKNOWN` included) and
    /// CloudKit JS's `PENDING`.
    public static let documentedAcceptanceStatuses = ["INVITED", "ACCEPTED", "REMOVED", "UNKNOWN", "PENDING"]

    /// An acceptance status as a request sends it: any documented word. The server decides a participant's
    /// status (an owner adding someone invites them; only they accept, or leave), as Apple's does, so
    /// `UNKNOWN`, what a client sends for a participant it just made, reads as invited. Nil for a word the
    /// reference does not document.
    public static func requestedAcceptance(_ word: String) -> AcceptanceStatus? {
        word == "UNKNOWN" ? .pending : acceptance(word)
    }

    /// The permission word written for a permission.
    public static func permission(_ permission: Permission) -> String {
        switch permission {
        case .none: "NONE"
        case .readOnly: "READ_ONLY"
        case .readWrite: "READ_WRITE"
        }
    }

    /// Reads a permission word; nil for any other word.
    public static func permission(_ word: String) -> Permission? {
        Permission.allCases.first { permission($0) == word }
    }

    // MARK: - Reference actions and subscription triggers

    /// A reference's `action`: `NONE`, `DELETE_SELF`, `VALIDATE`.
    public static func referenceAction(_ action: ReferenceAction) -> String {
        switch action {
        case .none: "NONE"
        case .deleteSelf: "DELETE_SELF"
        case .validate: "VALIDATE"
        }
    }

    /// Reads a reference's `action`; nil for any other word.
    public static func referenceAction(_ word: String) -> ReferenceAction? {
        ReferenceAction.allCases.first { referenceAction($0) == word }
    }

    /// A query subscription's `firesOn` word: `create`, `update`, `delete`.
    public static func trigger(_ trigger: Subscription.Trigger) -> String {
        switch trigger {
        case .create: "create"
        case .update: "update"
        case .delete: "delete"
        }
    }

    /// Reads a `firesOn` word; nil for any other word.
    public static func trigger(_ word: String) -> Subscription.Trigger? {
        Subscription.Trigger.allCases.first { trigger($0) == word }
    }

    /// A notification payload's `ck.qry.fo` (native CloudKit's, not in the reference): 1 created,
    /// 2 updated, 3 deleted.
    public static func triggerCode(_ trigger: Subscription.Trigger) -> Int {
        switch trigger {
        case .create: 1
        case .update: 2
        case .delete: 3
        }
    }

    /// Reads a `ck.qry.fo` number; nil for any other number.
    public static func trigger(code: Int) -> Subscription.Trigger? {
        Subscription.Trigger.allCases.first { triggerCode($0) == code }
    }
}
