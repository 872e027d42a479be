import Foundation

/// Masks every credential of the exchanges a recording holds, keeping which person each belonged to.
///
/// A web auth token becomes `<web-auth-token:person-N>`: every token of one chain (a token, the one its
/// answer hands out, and so on) names the same person, so that a replay knows whose request each was
/// without any token. The API token becomes `<api-token>`, a server-to-server key ID `<server-key:N>`, a
/// signature `<signature>`, any other secret (a session cookie, a form's check) `<masked>`.
///
/// What is masked is decided on each exchange by itself: its request and answer are searched for credentials
/// first (where Web Services sends them, and written inside text: a sign-in page's token to paste, the
/// popup's script, a redirect's `Location`, a form), then every text of both is masked with all of them. A
/// file is never written holding a token that only a later exchange shows to be one. Values seen as
/// credentials before are masked too wherever else they turn up (a `redirectURL`, an error's reason).
public struct CredentialMask: Sendable {
    /// Query parameters that carry web auth tokens (CloudKit JS 1.x sends the session too).
    static let tokenParameters: Set<String> = ["ckWebAuthToken", "ckSession"]
    /// JSON keys whose values are web auth tokens, in requests and answers.
    static let tokenKeys: Set<String> = ["ckWebAuthToken", "webAuthToken", "ckSession"]
    /// Query parameters and JSON keys whose values are API tokens.
    static let apiTokenKeys: Set<String> = ["ckAPIToken", "apiToken"]
    /// Form fields (and hidden inputs) whose values are API tokens: the console's sign-in form posts it as
    /// `token`.
    static let apiTokenFields: Set<String> = ["token"]
    /// Form fields (and hidden inputs) whose values are other secrets: the console's sign-out check.
    static let otherSecretFields: Set<String> = ["csrf"]
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
    /// The placeholder of a secret that is neither a token nor a key (a session cookie, a form's check).
    public static let maskedPlaceholder = "<masked>"
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
    /// The secrets of the exchange being masked, longest first, with their placeholders: each looked for in
    /// every text of that exchange, whatever was seen before.
    private var exchangeSecrets: [(secret: String, placeholder: String)] = []
    /// The forms a secret is written in (as it is, percent-encoded, JSON-escaped), kept since a long
    /// recording looks for the same ones in every exchange.
    private var formsOf: [String: [String]] = [:]
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
        var requestJSON = RecordedExchange.Body(requestBody)
        let answer = RecordedExchange.Body(responseBody)
        let requestTexts =
            [path] + query.map(\.value) + requestHeaders.map(\.1) + Self.texts(of: requestJSON)
        let answerTexts = responseHeaders.map(\.1) + Self.texts(of: answer)
        var local: [String: String] = [:]
        /// Credentials found written inside text, as the text writes them: masked as their value is.
        var written: [CredentialText.Found] = []

        // The API token, wherever the client sent it or the answer shows it (the console's form and the page
        // that posts it).
        var apiTokens = query.filter { Self.apiTokenKeys.contains($0.name) }.map(\.value)
        apiTokens += requestJSON.jsonValue.map { Self.strings(under: Self.apiTokenKeys, in: $0) } ?? []
        apiTokens += answer.jsonValue.map { Self.strings(under: Self.apiTokenKeys, in: $0) } ?? []
        var apiTokensWritten: [CredentialText.Found] = []
        for text in requestTexts + answerTexts {
            for name in Self.apiTokenKeys {
                apiTokensWritten += CredentialText.parameterValues(named: name, in: text)
                apiTokensWritten += CredentialText.jsonStringValues(key: name, in: text)
            }
            for name in Self.apiTokenKeys {
                apiTokensWritten += CredentialText.inputValues(named: name, in: text)
            }
        }
        apiTokens += apiTokensWritten.map(\.value)
        written += apiTokensWritten
        for token in apiTokens where Self.isToken(token) {
            placeholderOf[token] = Self.apiTokenPlaceholder
            remember(token, always: true)
        }
        // What a person typed in the console's form (`token`; not a URL's, whose `token=` can be anything) is
        // masked in this exchange only: a mistyped word is no API token to look for in every later one.
        var typed: [CredentialText.Found] = []
        for text in requestTexts + answerTexts {
            for name in Self.apiTokenFields { typed += CredentialText.inputValues(named: name, in: text) }
        }
        if case .text(let form) = requestJSON {
            for name in Self.apiTokenFields { typed += CredentialText.parameterValues(named: name, in: form) }
        }
        for found in typed where found.value.count >= 4 {
            local[found.value] = placeholderOf[found.value] ?? Self.apiTokenPlaceholder
            local[found.written] = local[found.value]
        }
        for (name, value) in requestHeaders where name.lowercased() == Self.keyIDHeader && !value.isEmpty {
            let number = keyIDs[value] ?? keyIDs.count + 1
            keyIDs[value] = number
            placeholderOf[value] = "<server-key:\(number)>"
            remember(value, always: true)
        }

        // Who sent it: the person of its token, or a new one for a token first met here.
        var person: Int?
        var sentTokens =
            query.filter { Self.tokenParameters.contains($0.name) }.map(\.value)
            + requestHeaders.filter { $0.0.lowercased() == Self.webAuthTokenHeader }.map(\.1)
            + (requestJSON.jsonValue.map(Self.tokens(in:)) ?? [])
        for text in requestTexts {
            let found = Self.tokensWritten(in: text, signInPage: false)
            sentTokens += found.map(\.value)
            written += found
        }
        for token in sentTokens where Self.isToken(token) && placeholderOf[token] != Self.apiTokenPlaceholder {
            person = person ?? personOfToken[token] ?? newPerson()
            learn(token, person: person)
        }
        // The answer's tokens: each one in the body belongs to the person its object names (a batch sign-in
        // answers many people), else to a person already met with it, else to the sender, else to someone new.
        // A token written inside text (a sign-in page's, the popup's script, a redirect's `Location`) names no
        // user, and counts as the answer's one.
        var held = answer.jsonValue.map(Self.tokenHolders(in:)) ?? []
        let signInPage = path.lowercased().contains("signin")
        for text in answerTexts {
            let found = Self.tokensWritten(in: text, signInPage: signInPage)
            written += found
            for token in found.map(\.value) where !held.contains(where: { $0.0 == token }) {
                held.append((token, nil))
            }
        }
        held.removeAll { !Self.isToken($0.0) || placeholderOf[$0.0] == Self.apiTokenPlaceholder }
        let single = held.count == 1
        for (token, user) in held {
            let owner =
                personOfToken[token] ?? user.flatMap { personOfUser[$0] }
                ?? (single ? person : nil) ?? newPerson()
            learn(token, person: owner)
            if let user, personOfUser[user] == nil { personOfUser[user] = owner }
            if single, person == nil { person = owner }
        }
        let answerHeaderTokens = responseHeaders.filter { $0.0.lowercased() == Self.webAuthTokenHeader }.map(\.1)
        for token in answerHeaderTokens where Self.isToken(token) {
            let owner = personOfToken[token] ?? person ?? newPerson()
            learn(token, person: owner)
        }

        // Secrets of this exchange alone: session cookies, a form's check, an Authorization's credential.
        for (name, value) in requestHeaders + responseHeaders {
            switch name.lowercased() {
            case "cookie", "set-cookie":
                for cookie in CredentialText.cookieValues(value, setCookie: name.lowercased() == "set-cookie")
                where CredentialText.isOpaque(cookie) {
                    local[cookie] = Self.maskedPlaceholder
                }
            case "authorization", "proxy-authorization":
                if let credential = value.split(separator: " ").last, credential.count >= 8 {
                    local[String(credential)] = Self.maskedPlaceholder
                }
            default: break
            }
        }
        for text in requestTexts + answerTexts {
            for name in Self.otherSecretFields {
                for secret in CredentialText.inputValues(named: name, in: text) where secret.value.count >= 4 {
                    local[secret.value] = Self.maskedPlaceholder
                    local[secret.written] = Self.maskedPlaceholder
                }
            }
        }
        if case .text(let form) = requestJSON {
            for name in Self.otherSecretFields {
                for secret in CredentialText.parameterValues(named: name, in: form) where secret.value.count >= 4 {
                    local[secret.value] = Self.maskedPlaceholder
                    local[secret.written] = Self.maskedPlaceholder
                }
            }
        }

        // Every secret found above, looked for in every text of both sides.
        var secrets = local
        for token in apiTokens + sentTokens + held.map(\.0) + answerHeaderTokens {
            if let placeholder = placeholderOf[token] { secrets[token] = placeholder }
        }
        for found in written where found.written != found.value {
            if let placeholder = placeholderOf[found.value] { secrets[found.written] = placeholder }
        }
        exchangeSecrets = secrets.filter { $0.key.count >= 4 }.map { (secret: $0.key, placeholder: $0.value) }
            .sorted { $0.secret.count > $1.secret.count }
        defer {
            // The forms of a secret of this exchange alone are not kept: a long recording meets many.
            for (secret, _) in exchangeSecrets where !lasting.contains(secret) && !recent.contains(secret) {
                formsOf[secret] = nil
            }
            exchangeSecrets = []
        }
        for secret in exchangeSecrets.map(\.secret) + lasting where formsOf[secret] == nil {
            formsOf[secret] = Self.forms(of: secret)
        }
        for index in query.indices { query[index].value = masked(query[index].value) }
        requestJSON = maskBody(requestJSON)
        return RecordedExchange(
            request: .init(
                method: method, path: masked(path), query: query, headers: maskHeaders(requestHeaders),
                body: requestJSON),
            response: .init(status: status, headers: maskHeaders(responseHeaders), body: maskBody(answer)))
    }

    /// The texts of a body that may hold a credential written inside them: a text body whole, a JSON body's
    /// strings that name one.
    private static func texts(of body: RecordedExchange.Body) -> [String] {
        switch body {
        case .text(let text): [text]
        case .json(let value): strings(in: value).filter(mayHoldCredential)
        case .none, .bytes: []
        }
    }

    private static func mayHoldCredential(_ text: String) -> Bool {
        text.contains("=") || text.contains("\"")
    }

    private static func strings(in value: JSONValue) -> [String] {
        switch value {
        case .string(let text): [text]
        case .array(let list): list.flatMap(strings(in:))
        case .object(let object): object.values.flatMap(strings(in:))
        default: []
        }
    }

    /// The string values under `keys` in a JSON value, at any depth.
    private static func strings(under keys: Set<String>, in value: JSONValue) -> [String] {
        switch value {
        case .object(let object):
            object.flatMap { key, inner -> [String] in
                if keys.contains(key), let text = inner.stringValue { return [text] }
                return strings(under: keys, in: inner)
            }
        case .array(let list): list.flatMap { strings(under: keys, in: $0) }
        default: []
        }
    }

    /// The web auth tokens written inside `text`: in a query or form, in a script's JSON, in a hidden input,
    /// and (on a sign-in page, which shows the token to paste) in a `<code>` element.
    private static func tokensWritten(in text: String, signInPage: Bool) -> [CredentialText.Found] {
        var found: [CredentialText.Found] = []
        for name in tokenParameters.union(tokenKeys) {
            found += CredentialText.parameterValues(named: name, in: text)
            found += CredentialText.jsonStringValues(key: name, in: text)
            found += CredentialText.inputValues(named: name, in: text)
        }
        if signInPage { found += CredentialText.codeValues(in: text) }
        return found
    }

    /// A secret as it is written raw, percent-encoded in a query (upper- and lowercase hex, with or without
    /// `-._~`), JSON-escaped and HTML-escaped.
    static func forms(of secret: String) -> [String] {
        var forms: Set<String> = [secret, secret.replacingOccurrences(of: "/", with: "\\/")]
        var unreserved = CharacterSet.alphanumerics
        unreserved.insert(charactersIn: "-._~")
        for allowed in [CharacterSet.alphanumerics, unreserved] {
            if let encoded = secret.addingPercentEncoding(withAllowedCharacters: allowed) {
                forms.insert(encoded)
                forms.insert(Self.lowercasingEscapes(encoded))
            }
        }
        let html = secret.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
        forms.insert(html)
        return forms.sorted { $0.count > $1.count }
    }

    private static func lowercasingEscapes(_ encoded: String) -> String {
        var result = ""
        var pending = 0
        for character in encoded {
            if character == "%" {
                pending = 2
                result.append(character)
            } else if pending > 0 {
                pending -= 1
                result += character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
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
        if recent.count > 64 {
            let dropped = recent.removeFirst()
            if !lasting.contains(dropped) { formsOf[dropped] = nil }
        }
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
        case .bytes(let data): .bytes(maskedBytes(data))
        case .none: body
        }
    }

    /// Bytes that are not text (an asset's) with the exchange's secrets replaced, should one be among them.
    private func maskedBytes(_ data: Data) -> Data {
        var data = data
        for (secret, placeholder) in exchangeSecrets
            + lasting.compactMap({ secret in
                placeholderOf[secret].map { (secret: secret, placeholder: $0) }
            })
        {
            for form in formsOf[secret] ?? [secret] {
                let needle = Data(form.utf8)
                while let range = data.range(of: needle) { data.replaceSubrange(range, with: Data(placeholder.utf8)) }
            }
        }
        return data
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

    /// `text` with every credential of this exchange, and every one seen before, replaced by its placeholder, in
    /// each form it is written in (raw, percent-encoded, JSON- and HTML-escaped).
    public func masked(_ text: String) -> String {
        if let whole = placeholderOf[text] { return whole }
        var result = text
        for (secret, placeholder) in exchangeSecrets {
            for form in formsOf[secret] ?? [secret] where result.utf8.count >= form.utf8.count {
                result = result.replacingOccurrences(of: form, with: placeholder)
            }
        }
        for secret in lasting + recent where secret.count >= 4 {
            guard let placeholder = placeholderOf[secret], result.utf8.count >= secret.utf8.count else { continue }
            for form in formsOf[secret] ?? [secret] {
                result = result.replacingOccurrences(of: form, with: placeholder)
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
