import Foundation

/// Sends a recording's requests in order to another server and compares each answer with the recorded one.
///
/// The replay carries what a later request takes from an earlier answer (a change tag, a sync token, a
/// continuation marker, a user record name, a short GUID, an upload URL) from its own earlier answers, and
/// gives each person of the recording a user of its own: a person whose sign-in the recording holds signs
/// in by replaying it; any other person is signed in on the server before their first request, named from
/// the recording's `users/current` answers where it has them.
///
/// A recording is data, never a program: each request, as recorded and again with the replay's values, is
/// sent only when `scope` admits it (a request of CloudKit Web Services, as a path on the one server `send`
/// reaches); any other is refused and named in the report, and the replay goes on with the next.
public struct Replayer: Sendable {
    /// A request as the replay sends it: the recorded one with the replay's values.
    public typealias Outgoing = RecordedExchange.Request
    /// Sends one request and hands back the answer (header names lowercased).
    /// - Throws: when the server cannot be reached; the replay stops there.
    public typealias Send = @Sendable (Outgoing) async throws -> RecordedExchange.Response

    private let exchanges: [(file: String, exchange: RecordedExchange)]
    private let allowList: AllowList
    private let apiToken: String
    private let signedKeys: Set<String>
    private let scope: ReplayScope

    /// - Parameters:
    ///   - scope: the requests the replay may send; any other is refused, and reported.
    ///   - signedKeys: the recording's server-to-server keys (`<server-key:N>`) that `send` signs for with keys
    ///     of its own; requests signed with any other key are reported, not sent.
    public init(
        exchanges: [(file: String, exchange: RecordedExchange)], apiToken: String, scope: ReplayScope,
        allowList: AllowList = AllowList(), signedKeys: Set<String> = []
    ) {
        self.exchanges = exchanges
        self.apiToken = apiToken
        self.scope = scope
        self.allowList = allowList
        self.signedKeys = signedKeys
    }

    /// The server-to-server keys a recording's requests were signed with (`<server-key:N>`).
    public static func serverKeys(in exchanges: [RecordedExchange]) -> Set<String> {
        Set(exchanges.compactMap { serverKey(of: $0.request) })
    }

    /// Replays every exchange in order.
    /// - Throws: what `send` throws.
    public func run(send: @escaping Send) async throws -> ReplayReport {
        var correspondence = Correspondence()
        correspondence.bindCredential(CredentialMask.apiTokenPlaceholder, to: apiToken)
        let people = Self.people(in: exchanges.map(\.exchange))
        var results: [ReplayReport.Exchange] = []
        // Long polls sent and not answered yet: each answers once a later request has made its notification.
        var waiting: [(index: Int, exchange: RecordedExchange, answer: Task<RecordedExchange.Response, any Error>)] = []
        for (file, exchange) in exchanges {
            let name = (file as NSString).lastPathComponent
            let recorded = exchange.request
            var result = ReplayReport.Exchange(
                file: name, method: recorded.method, path: recorded.path, differences: [])
            if let refusal = scope.refusal(of: recorded) {
                result.refused = correspondence.masked(refusal)
                results.append(result)
                continue
            }
            if let keyID = Self.serverKey(of: recorded), !signedKeys.contains(keyID) {
                result.differences = [
                    Difference(
                        path: "request", kind: .notReplayed,
                        replayed: "signed with the server-to-server key \(keyID), which a replay does not hold")
                ]
                results.append(allowList.marking(result))
                continue
            }
            // A person met for the first time without their sign-in in the recording signs in now.
            for placeholder in Self.personPlaceholders(in: recorded) where !correspondence.hasCredential(placeholder) {
                guard let world = Self.world(of: recorded.path) else { continue }
                let person = people[placeholder] ?? Person(email: nil, name: nil)
                let number = placeholder.filter(\.isNumber)
                let signIn = Self.signIn(
                    email: person.email ?? "person-\(number)@replay.sharelane.invalid", name: person.name,
                    world: world, apiToken: apiToken)
                let answer = try await send(signIn)
                if let token = answer.body.jsonValue?["ckWebAuthToken"]?.stringValue {
                    correspondence.bindCredential(placeholder, to: token)
                }
            }
            let outgoing = Self.carried(recorded, with: correspondence)
            // A value carried from an earlier answer (a URL the server handed out) may not make a request
            // go elsewhere, or become another.
            if let refusal = scope.refusal(of: outgoing) {
                result.refused = correspondence.masked("with the values carried from earlier answers, " + refusal)
                results.append(result)
                continue
            }
            if Self.waitsForLaterRequests(recorded) {
                waiting.append((results.count, exchange, Task { try await send(outgoing) }))
                results.append(result)
                continue
            }
            let answer = try await send(outgoing)
            // The sender's next token, from the header every answer carries it in.
            let sender = Self.personPlaceholders(in: recorded).first
            let token = answer.headers[CredentialMask.webAuthTokenHeader]
            if let token, !token.isEmpty {
                if let sender { correspondence.bindCredential(sender, to: token) }
                if let recordedHeader = exchange.response.headers[CredentialMask.webAuthTokenHeader],
                    recordedHeader.hasPrefix("<")
                {
                    correspondence.bindCredential(recordedHeader, to: token)
                }
            }
            result.differences = Self.compare(exchange.response, answer, &correspondence)
            results.append(allowList.marking(result))
        }
        for (index, exchange, answer) in waiting {
            results[index].differences = Self.compare(exchange.response, try await answer.value, &correspondence)
            results[index] = allowList.marking(results[index])
        }
        return ReplayReport(exchanges: results)
    }

    /// The differences of a replayed answer from the recorded one; the partners it meets join `correspondence`.
    private static func compare(
        _ recorded: RecordedExchange.Response, _ replayed: RecordedExchange.Response,
        _ correspondence: inout Correspondence
    ) -> [Difference] {
        // Handed over, not shared: a copy of the partners for every exchange made a long replay quadratic.
        var comparison = AnswerComparison(correspondence: correspondence)
        correspondence = Correspondence()
        comparison.compare(recorded: recorded, replayed: replayed)
        correspondence = comparison.correspondence
        return comparison.differences
    }

    /// Whether a request is a long poll that answers only once a later request makes its notification (the
    /// webcourier channel of `tokens/create`): the replay sends it, goes on, and compares its answer last.
    static func waitsForLaterRequests(_ request: Outgoing) -> Bool {
        request.method == "GET" && request.path.hasPrefix("/webcourier/")
    }

    struct Person {
        var email: String?
        var name: String?
    }

    /// Each person's address and name from the recording's `users/current` answers.
    static func people(in exchanges: [RecordedExchange]) -> [String: Person] {
        var people: [String: Person] = [:]
        for exchange in exchanges where exchange.request.path.hasSuffix("/users/current") {
            guard let placeholder = personPlaceholders(in: exchange.request).first,
                let answer = exchange.response.body.jsonValue
            else { continue }
            let email = answer["emailAddress"]?.stringValue ?? answer["lookupInfo"]?["emailAddress"]?.stringValue
            let name = [answer["firstName"]?.stringValue, answer["lastName"]?.stringValue].compactMap { $0 }
                .joined(separator: " ")
            people[placeholder] = Person(
                email: email.flatMap { $0.contains("@") && !$0.hasPrefix("<") ? $0 : nil },
                name: name.isEmpty ? nil : name)
        }
        return people
    }

    /// The person placeholders a request sends (`<web-auth-token:person-N>`).
    static func personPlaceholders(in request: Outgoing) -> [String] {
        let values = request.query.map(\.value) + request.headers.values
        var found: [String] = []
        for value in values where value.hasPrefix("<web-auth-token:") && !found.contains(value) { found.append(value) }
        return found
    }

    /// The server-to-server key a request is signed with, as the recording names it.
    public static func serverKey(of request: Outgoing) -> String? {
        request.headers[CredentialMask.keyIDHeader]
    }

    /// The container and environment of a database path (`/database/1/C/E/…`).
    static func world(of path: String) -> (container: String, environment: String)? {
        let parts = path.split(separator: "/")
        guard parts.count >= 4, parts[0] == "database" || parts[0] == "device" else { return nil }
        return (String(parts[2]).removingPercentEncoding ?? String(parts[2]), String(parts[3]))
    }

    /// The emulator's sign-in of a person (`POST /auth/signin`).
    static func signIn(
        email: String, name: String?, world: (container: String, environment: String), apiToken: String
    ) -> Outgoing {
        var body: [String: JSONValue] = [
            "emailAddress": .string(email), "container": .string(world.container),
            "environment": .string(world.environment),
        ]
        if let name { body["name"] = .string(name) }
        return Outgoing(
            method: "POST", path: "/auth/signin", query: [.init(name: "ckAPIToken", value: apiToken)],
            headers: ["content-type": "text/plain"], body: .json(.object(body)))
    }

    /// Where a request sends credentials: query parameters, the web auth token header, JSON keys. The replay's
    /// credentials go there and nowhere else.
    static let credentialParameters: Set<String> = ["ckAPIToken", "ckWebAuthToken", "ckSession"]
    static let credentialKeys: Set<String> = ["ckAPIToken", "ckWebAuthToken", "webAuthToken", "ckSession"]

    /// The recorded request with the replay's values: credentials where a request sends them, and every value
    /// taken from an earlier answer.
    static func carried(_ request: Outgoing, with correspondence: Correspondence) -> Outgoing {
        var outgoing = request
        outgoing.path = correspondence.carried(request.path, withCredentials: false)
        outgoing.query = request.query.map {
            .init(
                name: $0.name,
                value: correspondence.carried($0.value, withCredentials: credentialParameters.contains($0.name)))
        }
        for (name, value) in request.headers {
            outgoing.headers[name] = correspondence.carried(
                value, withCredentials: name == CredentialMask.webAuthTokenHeader)
        }
        switch request.body {
        case .json(let value): outgoing.body = .json(carried(value, correspondence, credentials: false))
        case .text(let text): outgoing.body = .text(correspondence.carried(text, withCredentials: false))
        case .none, .bytes: break
        }
        return outgoing
    }

    private static func carried(_ value: JSONValue, _ correspondence: Correspondence, credentials: Bool) -> JSONValue {
        switch value {
        case .string(let text): .string(correspondence.carried(text, withCredentials: credentials))
        case .array(let list): .array(list.map { carried($0, correspondence, credentials: false) })
        case .object(let object):
            .object(
                Dictionary(
                    uniqueKeysWithValues: object.map { key, item in
                        (key, carried(item, correspondence, credentials: credentialKeys.contains(key)))
                    }))
        default: value
        }
    }
}
