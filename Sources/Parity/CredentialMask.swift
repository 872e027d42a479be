import Foundation

/// Masks every credential of the exchanges a recording holds, keeping which person each belonged to.
///
/// A web auth token becomes `<web-auth-token:person-N>`: every token of one chain (a token, the one its
/// answer hands out, and so on) names the same person, so that a replay knows whose request each was
/// without any token. The API token becomes `<api-token>`, a server-to-server key ID `<server-key:N>`, a
/// signature `<signature>`. Beyond the places credentials are sent, every value once seen as a credential is
/// masked wherever else it turns up (a `redirectURL`, an error's reason).
public struct CredentialMask: Sendable {
    /// Query parameters that carry web auth tokens (CloudKit JS 1.x sends the session too).
    static let tokenParameters: Set<String> = ["ckWebAuthToken", "ckSession"]
    /// JSON keys whose values are web auth tokens, in requests and answers.
    static let tokenKeys: Set<String> = ["ckWebAuthToken", "webAuthToken", "ckSession"]
    /// Headers that carry credentials, lowercased; the web auth token header names a person.
    public static let webAuthTokenHeader = "x-apple-cloudkit-web-auth-token"
    static let keyIDHeader = "x-apple-cloudkit-request-keyid"
    static let signatureHeader = "x-apple-cloudkit-request-signaturev1"
    static let otherCredentialHeaders: Set<String> = ["authorization", "cookie", "set-cookie", "proxy-authorization"]
    /// What the proxy leaves out of a case file: how the bytes travelled, not what they said.
    static let transportHeaders: Set<String> = [
        "host", "content-length", "connection", "keep-alive", "transfer-encoding", "te", "upgrade", "accept-encoding",
        "date", "user-agent", "accept", "accept-language", "origin", "referer",
    ]
    /// The placeholder of the API token.
    public static let apiTokenPlaceholder = "<api-token>"
    /// A field whose values `--redact-field` masks becomes this.
    public static let redacted = "<redacted>"

    private var personOfToken: [String: Int] = [:]
    private var personOfUser: [String: Int] = [:]
    private var keyIDs: [String: Int] = [:]
    private var placeholderOf: [String: String] = [:]
    private var people = 0
    /// The credentials looked for inside other text: the API token and key IDs, and the newest tokens.
    private var lasting: [String] = []
    private var recent: [String] = []
    private let redactedFields: Set<String>

    public init(redactedFields: [String] = []) {
        self.redactedFields = Set(redactedFields)
    }

    /// The placeholder of person `number`'s web auth tokens.
    public static func tokenPlaceholder(person: Int) -> String { "<web-auth-token:person-\(person)>" }

    /// The exchange as a case file holds it.
    public mutating func mask(
        method: String, path: String, rawQuery: String?, requestHeaders: [(String, String)], requestBody: Data?,
        status: Int, responseHeaders: [(String, String)], responseBody: Data?
    ) -> RecordedExchange {
        var query = RecordedExchange.queryItems(rawQuery)
        // Who sent it: the person of its token, or a new one for a token first met here.
        var person: Int?
        let sentTokens =
            query.filter { Self.tokenParameters.contains($0.name) }.map(\.value)
            + requestHeaders.filter { $0.0.lowercased() == Self.webAuthTokenHeader }.map(\.1)
        var requestJSON = RecordedExchange.Body(requestBody)
        for token in sentTokens + (requestJSON.jsonValue.map(Self.tokens(in:)) ?? []) where Self.isToken(token) {
            person = person ?? personOfToken[token] ?? newPerson()
            learn(token, person: person)
        }
        for index in query.indices {
            let item = query[index]
            if item.name == "ckAPIToken", !item.value.isEmpty {
                placeholderOf[item.value] = Self.apiTokenPlaceholder
                remember(item.value, always: true)
            }
        }
        let answer = RecordedExchange.Body(responseBody)
        // The answer's tokens: each one in the body belongs to the person its object names (a batch sign-in
        // answers many people), else to a person already met with it, else to the sender, else to someone new.
        let held = answer.jsonValue.map(Self.tokenHolders(in:)) ?? []
        for (token, user) in held where Self.isToken(token) {
            let owner =
                personOfToken[token] ?? user.flatMap { personOfUser[$0] }
                ?? (held.count == 1 ? person : nil) ?? newPerson()
            learn(token, person: owner)
            if let user, personOfUser[user] == nil { personOfUser[user] = owner }
            if held.count == 1, person == nil { person = owner }
        }
        for token in responseHeaders.filter({ $0.0.lowercased() == Self.webAuthTokenHeader }).map(\.1)
        where Self.isToken(token) {
            let owner = personOfToken[token] ?? person ?? newPerson()
            learn(token, person: owner)
        }
        for index in query.indices { query[index].value = masked(query[index].value) }
        requestJSON = maskBody(requestJSON)
        return RecordedExchange(
            request: .init(
                method: method, path: masked(path), query: query, headers: maskHeaders(requestHeaders),
                body: requestJSON),
            response: .init(status: status, headers: maskHeaders(responseHeaders), body: maskBody(answer)))
    }

    private static func isToken(_ value: String) -> Bool { !value.isEmpty && value != "null" }

    private mutating func newPerson() -> Int {
        people += 1
        return people
    }

    private mutating func learn(_ token: String, person: Int?) {
        guard let person else { return }
        personOfToken[token] = person
        placeholderOf[token] = Self.tokenPlaceholder(person: person)
        remember(token)
    }

    /// Keeps a credential among those looked for inside other text. Every answer hands out a new token, and
    /// looking for each one ever seen in every string made a long recording quadratic: a value that is a
    /// token whole is found by `placeholderOf` whatever its age, and inside text only the newest are looked
    /// for (the API token and key IDs always).
    private mutating func remember(_ secret: String, always: Bool = false) {
        if always {
            if !lasting.contains(secret) { lasting.append(secret) }
            return
        }
        recent.removeAll { $0 == secret }
        recent.append(secret)
        if recent.count > 64 { recent.removeFirst() }
    }

    /// Every web auth token a JSON body holds under a token key, at any depth, with the `userRecordName` of
    /// the object that holds it.
    static func tokenHolders(in value: JSONValue) -> [(String, String?)] {
        switch value {
        case .object(let object):
            var found: [(String, String?)] = []
            for (key, inner) in object.sorted(by: { $0.key < $1.key }) {
                if tokenKeys.contains(key), let text = inner.stringValue {
                    found.append((text, object["userRecordName"]?.stringValue))
                } else {
                    found += tokenHolders(in: inner)
                }
            }
            return found
        case .array(let list): return list.flatMap(tokenHolders(in:))
        default: return []
        }
    }

    /// Every web auth token a JSON body holds under a token key, at any depth.
    static func tokens(in value: JSONValue) -> [String] {
        switch value {
        case .object(let object):
            return object.flatMap { key, value -> [String] in
                if tokenKeys.contains(key), let text = value.stringValue { return [text] }
                return tokens(in: value)
            }
        case .array(let list): return list.flatMap(tokens(in:))
        default: return []
        }
    }

    private mutating func maskHeaders(_ headers: [(String, String)]) -> [String: String] {
        var kept: [String: String] = [:]
        for (name, value) in headers {
            let name = name.lowercased()
            if Self.transportHeaders.contains(name) { continue }
            switch name {
            case Self.keyIDHeader:
                let number = keyIDs[value] ?? keyIDs.count + 1
                keyIDs[value] = number
                placeholderOf[value] = "<server-key:\(number)>"
                remember(value, always: true)
                kept[name] = "<server-key:\(number)>"
            case Self.signatureHeader: kept[name] = "<signature>"
            case let credential where Self.otherCredentialHeaders.contains(credential): kept[name] = "<masked>"
            default: kept[name] = masked(value)
            }
        }
        return kept
    }

    private func maskBody(_ body: RecordedExchange.Body) -> RecordedExchange.Body {
        switch body {
        case .json(let value): .json(maskJSON(value, key: nil))
        case .text(let text): .text(masked(text))
        case .none, .bytes: body
        }
    }

    private func maskJSON(_ value: JSONValue, key: String?) -> JSONValue {
        switch value {
        case .string(let text): return .string(masked(text))
        case .array(let list): return .array(list.map { maskJSON($0, key: key) })
        case .object(var object):
            for (name, inner) in object {
                if key == "fields", redactedFields.contains(name), case .object(var field) = inner,
                    let fieldValue = field["value"]
                {
                    field["value"] = redact(fieldValue)
                    object[name] = .object(field)
                } else if name == "fieldValue", let fieldName = object["fieldName"]?.stringValue,
                    redactedFields.contains(fieldName), case .object(var field) = inner, let fieldValue = field["value"]
                {
                    field["value"] = redact(fieldValue)
                    object[name] = .object(field)
                } else {
                    object[name] = maskJSON(inner, key: name)
                }
            }
            return .object(object)
        default: return value
        }
    }

    /// A redacted value keeps its shape (a list stays a list of as many), so that a replay still compares it.
    private func redact(_ value: JSONValue) -> JSONValue {
        switch value {
        case .array(let list): .array(list.map(redact))
        case .object(let object): .object(object.mapValues(redact))
        default: .string(Self.redacted)
        }
    }

    /// `text` with every credential seen so far replaced by its placeholder, as it is and percent-encoded
    /// (a token in a URL's query).
    public func masked(_ text: String) -> String {
        guard !placeholderOf.isEmpty else { return text }
        if let whole = placeholderOf[text] { return whole }
        var result = text
        for secret in lasting + recent where secret.count >= 4 {
            guard let placeholder = placeholderOf[secret] else { continue }
            result = result.replacingOccurrences(of: secret, with: placeholder)
            if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics), encoded != secret {
                result = result.replacingOccurrences(of: encoded, with: placeholder)
            }
        }
        return result
    }
}

extension RecordedExchange.Body {
    public var jsonValue: JSONValue? {
        if case .json(let value) = self { return value }
        return nil
    }
}
