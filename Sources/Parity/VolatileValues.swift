import Foundation

/// The values that differ between two runs by nature, known by the key that holds them, and how each
/// recorded one corresponds to the replay's.
///
/// A recorded value of a kind that must correspond (a change tag, a sync token) is named by a placeholder,
/// numbered by first appearance (`<tag:3>`); the first replayed value met in its place becomes its partner,
/// and from then on the recording's `<tag:3>` must meet that value and that value only. Requests carry the
/// partners: a later request that sends `<tag:3>`'s recorded value sends the replay's instead.
public enum VolatileKind: String, Sendable, CaseIterable {
    case tag, timestamp, user, syncToken = "sync-token", marker, guid, url, checksum, participant, uuid
    /// A push token `tokens/create` hands out, which `tokens/register` sends back.
    case pushToken = "push-token"
    /// An error's `reason`: words for people, which each server phrases its own way (and which quote change
    /// tags); only the `serverErrorCode` beside it must be the same.
    case reason
    /// A web auth token: replayed tokens are never compared or shown, only carried to the person's next request.
    case token

    /// The kind of value a key holds, or nil for a key whose value must be the same in every run.
    public static func of(key: String) -> VolatileKind? { byKey[key] }

    private static let byKey: [String: VolatileKind] = [
        "recordChangeTag": .tag, "zoneChangeTag": .tag, "etag": .tag, "changeTag": .tag,
        "timestamp": .timestamp, "expirationTime": .timestamp,
        "userRecordName": .user, "ownerRecordName": .user, "creatorUserRecordName": .user,
        "lastModifiedUserRecordName": .user,
        // A notification's zone owner (`ck.fet.zoid`, `ck.qry.zoid`) and its own ID (`ck.nid`).
        "zoid": .user, "nid": .uuid,
        "syncToken": .syncToken, "metaSyncToken": .syncToken,
        "continuationMarker": .marker,
        "shortGUID": .guid,
        "url": .url, "downloadURL": .url, "webcourierURL": .url, "shareURL": .url, "redirectURL": .url,
        "fileChecksum": .checksum, "referenceChecksum": .checksum, "receipt": .checksum, "wrappingKey": .checksum,
        "participantId": .participant, "inviterId": .participant,
        "uuid": .uuid, "reason": .reason, "apnsToken": .pushToken,
        "ckWebAuthToken": .token, "webAuthToken": .token, "ckSession": .token,
    ]

    /// Whether the replay's value must correspond to the recording's one for one; the others (timestamps,
    /// error UUIDs) need only be there, of the same type.
    var corresponds: Bool { ![.timestamp, .uuid, .token, .reason].contains(self) }
}

/// The partners of a replay so far: which replayed value each recorded one met, and back.
struct Correspondence: Sendable {
    /// Recorded value → the replay's (for tokens, the newest of the person).
    private(set) var forward: [String: String] = [:]
    private var backward: [VolatileKind: [String: String]] = [:]
    private var numbers: [VolatileKind: [String: Int]] = [:]
    /// Bound values long enough to find inside other text (a URL holding a short GUID), longest first.
    private var insideText: [(String, String)] = []
    /// Every credential of the replay: never shown.
    private(set) var secrets: Set<String> = []

    /// The replay's credentials by their placeholders in the recording (`<web-auth-token:person-1>`).
    private var credentials: [String: String] = [:]

    /// Whether the replay has a credential for a placeholder yet.
    func hasCredential(_ placeholder: String) -> Bool { credentials[placeholder] != nil }

    /// Binds a placeholder of the recording to the replay's credential (for tokens, the person's newest).
    mutating func bindCredential(_ placeholder: String, to secret: String) {
        credentials[placeholder] = secret
        forward[placeholder] = secret
        secrets.insert(secret)
    }

    /// The placeholder that names a recorded value in a report.
    mutating func placeholder(_ kind: VolatileKind, _ recorded: String) -> String {
        if let number = numbers[kind]?[recorded] { return "<\(kind.rawValue):\(number)>" }
        let number = (numbers[kind]?.count ?? 0) + 1
        numbers[kind, default: [:]][recorded] = number
        return "<\(kind.rawValue):\(number)>"
    }

    /// Checks a volatile value against its partner, binding it when it has none yet; nil when they correspond.
    mutating func check(_ kind: VolatileKind, recorded: String, replayed: String) -> (String, String)? {
        if kind == .url {
            // A signed URL (an asset's download) is signed anew each second: two URLs of one asset, signed a
            // second apart in one run and within one second in the other, are one URL in both. They
            // correspond without their expiry and signature, and are carried whole.
            let (left, right) = (Self.unsigned(recorded), Self.unsigned(replayed))
            if left != recorded || right != replayed {
                let found = check(.url, recorded: left, replayed: right)
                if forward[recorded] == nil, recorded != replayed {
                    forward[recorded] = replayed
                    bindParts(.url, recorded: recorded, replayed: replayed)
                }
                return found
            }
        }
        let name = placeholder(kind, recorded)
        if let partner = forward[recorded] {
            if partner == replayed { return nil }
            let other = backward[kind]?[replayed].map { "the value of \(placeholder(kind, $0))" } ?? "\"\(replayed)\""
            return (name, "\(other), not the value of \(name) before")
        }
        if let earlier = backward[kind]?[replayed], earlier != recorded {
            return (name, "the value of \(placeholder(kind, earlier))")
        }
        forward[recorded] = replayed
        backward[kind, default: [:]][replayed] = recorded
        // Only a short GUID stands inside other text (a share's URL); the rest are sent whole.
        if kind == .guid, recorded.count >= 6, recorded != replayed {
            insideText.append((recorded, replayed))
            insideText.sort { $0.0.count > $1.0.count }
        }
        bindParts(kind, recorded: recorded, replayed: replayed)
        return nil
    }

    /// The query parameters of a signed URL that say when it was signed: its expiry and its signature
    /// (`e` and `s`, in Apple's asset URLs and serve's).
    static let signingParameters: Set<String> = ["e", "s"]

    /// A URL without its expiry and signature; any other text as it is.
    static func unsigned(_ text: String) -> String {
        guard let question = text.firstIndex(of: "?"), text.hasPrefix("http") else { return text }
        let query = text[text.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false)
        let kept = query.filter { item in
            !signingParameters.contains(String(item.prefix { $0 != "=" }))
        }
        guard kept.count != query.count else { return text }
        return String(text[..<question]) + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
    }

    /// A URL's query values and path parts are partners too: an upload's ticket, a download's checksum, which a
    /// later request sends on its own.
    private mutating func bindParts(_ kind: VolatileKind, recorded: String, replayed: String) {
        guard kind == .url, let left = URLComponents(string: recorded.replacingOccurrences(of: "${f}", with: "f")),
            let right = URLComponents(string: replayed.replacingOccurrences(of: "${f}", with: "f"))
        else { return }
        let leftParts = left.percentEncodedPath.split(separator: "/")
        let rightParts = right.percentEncodedPath.split(separator: "/")
        var pairs: [(String, String)] = []
        if leftParts.count == rightParts.count {
            pairs += zip(leftParts, rightParts).map { (String($0), String($1)) }
        }
        for item in left.queryItems ?? [] {
            if let value = item.value, let other = right.queryItems?.first(where: { $0.name == item.name })?.value {
                pairs.append((value, other))
            }
        }
        for (from, to) in pairs where from != to && from.count >= 8 && forward[from] == nil {
            forward[from] = to
            insideText.append((from, to))
        }
        insideText.sort { $0.0.count > $1.0.count }
    }

    /// A recorded string as the replay should send or answer it: a bound value replaced whole, or where it
    /// stands inside the text.
    func carried(_ text: String) -> String { carried(text, withCredentials: true) }

    /// - Parameter withCredentials: whether the replay's credentials take their placeholders' places; only
    ///   where a request sends credentials, so that a recording cannot have one written into a record or a path.
    func carried(_ text: String, withCredentials: Bool) -> String {
        if let whole = forward[text] { return withCredentials || !secrets.contains(whole) ? whole : text }
        var result = text
        for (recorded, replayed) in insideText where result.contains(recorded) {
            result = result.replacingOccurrences(of: recorded, with: replayed)
        }
        if withCredentials, result.contains("<") {
            for (placeholder, secret) in credentials where result.contains(placeholder) {
                result = result.replacingOccurrences(of: placeholder, with: secret)
            }
        }
        return result
    }

    /// Text for a report: every credential of the replay replaced by `***`.
    func masked(_ text: String) -> String {
        var result = text
        for secret in secrets where secret.count >= 4 && result.contains(secret) {
            result = result.replacingOccurrences(of: secret, with: "***")
        }
        return result
    }
}
