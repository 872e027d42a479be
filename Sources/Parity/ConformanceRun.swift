import Foundation

/// The reference conformance checks (Docs/Reference/Dictionaries.md), played over CloudKit Web Services
/// against any service: every operation of the catalogue is sent in shapes that make its answer hold each of
/// its dictionaries (saved records, shares, deletions, per-entry errors), and each answer is checked against
/// the endpoint's answer dictionary (`ReferenceTable.problems`); a malformed request must answer the error
/// dictionary with `BAD_REQUEST`, and a request without a user `AUTHENTICATION_REQUIRED` with a `redirectURL`.
///
/// `sharelane conformance` runs it against a `serve` or the user's container, and ReferenceConformanceTests
/// against the emulator. No sockets: the caller's `send` talks to the service.
public struct ConformanceRun: Sendable {
    /// One request whose answer is checked: `{ALICE}`, `{BOB}`, `{SHORTGUID}` and `{APNSTOKEN}` in the body
    /// stand for the seeded world's.
    public struct Example: Sendable, CustomStringConvertible {
        public var path: String
        public var database = "private"
        public var method = "POST"
        /// Sent by the second person (the share's invitee), where the service has two.
        public var asBob = false
        public var body: String?

        public var description: String { "\(method) \(database)/\(path)" }
    }

    /// Who the checks act as.
    public enum People: Sendable {
        /// serve: Alice and Bob sign in by address (`POST /auth/signin`).
        case signIn
        /// Apple's service: the one signed-in user, whose web auth token this is, plays both parts.
        case token(String)
    }

    /// What one check found: nothing when it passed.
    public struct Outcome: Sendable, Codable, Equatable {
        /// `POST private/records/modify`, with what is special about the request after a comma.
        public var check: String
        /// Each difference from the reference with its key path (`records/modify.records[0].recordChangeTag:
        /// not string (an integer)`).
        public var problems: [String]
        /// Why the check was not made (an endpoint Apple's service does not have).
        public var skipped: String?

        public var passed: Bool { problems.isEmpty }
    }

    // The names the checks give what they make: apart from anything of a real container's own.
    static let lists = #"{"zoneName":"ConformanceLists"}"#
    static let trips = #"{"zoneName":"ConformanceTrips"}"#
    static let fresh = #"{"zoneName":"ConformanceNew"}"#
    static let nope = #"{"zoneName":"ConformanceNope"}"#
    static let todo = "ConformanceTodo"

    /// The checked requests: one for every operation serve routes.
    public static let examples: [Example] = [
        // A new record, a forced delete of a record that never was, and a create of one that is: a saved record,
        // a deletion and a per-record error in one answer.
        Example(
            path: "records/modify",
            body: #"{"zoneID":\#(lists),"operations":[{"operationType":"create","record":{"recordName":"eggs","#
                + #""recordType":"\#(todo)","fields":{"title":{"value":"Eggs","type":"STRING"},"qty":{"value":12}}}},"#
                + #"{"operationType":"forceDelete","record":{"recordName":"never"}},"#
                + #"{"operationType":"create","record":{"recordName":"milk","recordType":"\#(todo)","fields":{}}}]}"#),
        Example(
            path: "records/lookup",
            body: #"{"zoneID":\#(lists),"records":[{"recordName":"milk"},{"recordName":"pic"},{"recordName":"nope"}]}"#),
        Example(
            path: "records/query",
            body: #"{"zoneID":\#(lists),"resultsLimit":1,"query":{"recordType":"\#(todo)","sortBy":[{"#
                + #""fieldName":"spot","relativeLocation":{"value":{"latitude":48.85,"longitude":2.35},"#
                + #""type":"LOCATION"}}]}}"#),
        Example(path: "records/changes", body: #"{"zoneID":\#(lists)}"#),
        Example(
            path: "records/resolve", database: "public", asBob: true,
            body: #"{"shortGUIDs":[{"value":"{SHORTGUID}","shouldFetchRootRecord":true},{"value":"nosuchguid"}]}"#),
        Example(
            path: "records/accept", database: "public", asBob: true,
            body: #"{"shortGUIDs":[{"value":"{SHORTGUID}","shouldFetchRootRecord":true},{"value":"nosuchguid"}]}"#),
        Example(path: "zones/list", method: "GET"),
        Example(path: "zones/lookup", body: #"{"zones":[\#(lists),\#(nope)]}"#),
        Example(
            path: "zones/modify",
            body: #"{"operations":[{"operationType":"create","zone":{"zoneID":\#(fresh)}},"#
                + #"{"operationType":"delete","zone":{"zoneID":\#(nope)}}]}"#),
        Example(path: "zones/changes", body: "{}"),
        Example(path: "changes/database", body: "{}"),
        Example(path: "changes/zone", body: #"{"zones":[{"zoneID":\#(lists)},{"zoneID":\#(nope)}]}"#),
        Example(path: "users/current", database: "public", method: "GET"),
        Example(
            path: "users/lookup/email", database: "public",
            body: #"{"users":[{"emailAddress":"bob@example.com"},{"emailAddress":"nobody@example.com"}]}"#),
        Example(
            path: "users/lookup/phone", database: "public",
            body: #"{"users":[{"phoneNumber":"+15550100002"},{"phoneNumber":"+15550109999"}]}"#),
        Example(
            path: "users/lookup/id", database: "public",
            body: #"{"users":[{"userRecordName":"{BOB}"},{"userRecordName":"_nobody"}]}"#),
        Example(path: "users/lookup/contacts", database: "public", body: "{}"),
        Example(path: "users/caller", database: "public", method: "GET"),
        Example(
            path: "users/discover", database: "public",
            body: #"{"lookupInfos":[{"emailAddress":"bob@example.com"},{"emailAddress":"nobody@example.com"}]}"#),
        Example(path: "users/settings", database: "public", method: "GET"),
        Example(path: "subscriptions/list", method: "GET"),
        Example(
            path: "subscriptions/lookup",
            body: #"{"subscriptions":[{"subscriptionID":"conformance-lists"},{"subscriptionID":"conformance-nope"}]}"#
        ),
        Example(
            path: "subscriptions/modify",
            body: #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"conformance-todos","#
                + #""subscriptionType":"query","query":{"recordType":"\#(todo)"},"zoneID":\#(lists),"#
                + #""firesOn":["create"],"notificationInfo":{"alertBody":"new todo"}}},"#
                + #"{"operationType":"delete","subscription":{"subscriptionID":"conformance-lists","#
                + #""subscriptionType":"zone"}},{"operationType":"delete","subscription":{"#
                + #""subscriptionID":"conformance-nope","subscriptionType":"zone"}}]}"#),
        Example(path: "tokens/create", body: #"{"apnsEnvironment":"development"}"#),
        Example(path: "tokens/register", body: #"{"apnsEnvironment":"development","apnsToken":"{APNSTOKEN}"}"#),
        Example(
            path: "assets/upload",
            body: #"{"zoneID":\#(lists),"tokens":[{"recordName":"milk","recordType":"\#(todo)","fieldName":"photo"}]}"#
        ),
        Example(
            path: "assets/rereference",
            body: #"{"zoneID":\#(lists),"assets":[{"recordName":"pic","fieldName":"photo"},"#
                + #"{"recordName":"milk","fieldName":"title"},{"recordName":"nope","fieldName":"photo"}]}"#),
        Example(path: "schema/lookup", database: "public", method: "GET"),
        Example(
            path: "schema/extend", database: "public",
            body: #"{"schema":{"recordTypes":[{"name":"ConformanceNote","fields":[{"name":"text","type":"STRING","#
                + #""indexes":[]}]}]}}"#),
        Example(path: "schema/deploy", database: "public", body: "{}"),
    ]

    let table: ReferenceTable
    let container: String
    let environment: String
    let apiToken: String
    let people: People

    public init(table: ReferenceTable, container: String, environment: String, apiToken: String, people: People) {
        self.table = table
        self.container = container
        self.environment = environment
        self.apiToken = apiToken
        self.people = people
    }

    /// Whether a check is made against this service: Apple's has none of serve's own endpoints.
    func skips(_ path: String) -> String? {
        guard case .token = people, table.endpoint(path)?.isServesOwn == true else { return nil }
        return "serve's own endpoint, which Apple's service does not have"
    }

    /// Seeds the world, then makes every check in order (each example, each malformed request, the signed-out
    /// request), and tidies away what it made; `progress` hears each outcome as it is known.
    /// - Throws: what `send` throws (a service that cannot be reached).
    public func run(
        send: @escaping Replayer.Send, progress: @Sendable (Outcome) -> Void = { _ in }
    ) async throws -> [Outcome] {
        var caller = Caller(run: self, send: send)
        var outcomes: [Outcome] = []
        func note(_ outcome: Outcome) {
            outcomes.append(outcome)
            progress(outcome)
        }
        try await caller.signIn().forEach(note)
        try await caller.tidy()
        try await caller.seed().forEach(note)
        for example in Self.examples { note(try await caller.check(example)) }
        for example in Self.examples where example.method == "POST" { note(try await caller.refusal(example)) }
        note(try await caller.signedOut())
        try await caller.tidy()
        return outcomes
    }

    // MARK: - Checking an answer

    func problems(of example: Example, status: Int, body: RecordedExchange.Body) -> [String] {
        guard let endpoint = table.endpoint(example.path) else {
            return ["\(example.path): not an endpoint of the table of the reference's dictionaries"]
        }
        guard status == 200, let json = body.jsonValue else {
            return ["\(example.path): status \(status), not 200 with a JSON answer: \(Self.excerpt(body))"]
        }
        var found = table.problems(json, as: "dict:" + endpoint.answer, at: example.path)
        // Per-entry refusals carry documented codes, and codes this endpoint documents.
        for code in Self.errorCodes(in: json) where !endpoint.errors.contains(code) {
            found.append("\(example.path): answered \(code), not one of its row's error codes \(endpoint.errors)")
        }
        return found
    }

    /// Every `serverErrorCode` anywhere in an answer.
    public static func errorCodes(in value: JSONValue) -> [String] {
        switch value {
        case .object(let members):
            return (members["serverErrorCode"]?.stringValue.map { [$0] } ?? [])
                + members.sorted { $0.key < $1.key }.flatMap {
                    $0.key == "serverErrorCode" ? [] : errorCodes(in: $0.value)
                }
        case .array(let elements): return elements.flatMap(errorCodes(in:))
        default: return []
        }
    }

    static func excerpt(_ body: RecordedExchange.Body) -> String {
        let text: String
        switch body {
        case .none: text = "no body"
        case .json(let value): text = value.jsonText()
        case .text(let words): text = words
        case .bytes(let data): text = "\(data.count) bytes"
        }
        return text.count > 200 ? String(text.prefix(197)) + "…" : text
    }
}

// MARK: - The world the examples meet

extension ConformanceRun {
    /// One run's people and what the seed made: the tokens each answer hands on replace the person's last.
    struct Caller {
        let run: ConformanceRun
        let send: Replayer.Send
        /// Alice's token first, then Bob's, where the service has two people.
        var tokens: [String] = []
        var bob = ""
        var shortGUID = ""
        var apnsToken: String?

        init(run: ConformanceRun, send: @escaping Replayer.Send) {
            self.run = run
            self.send = send
        }

        /// Sends one request of a database as a person (0 Alice, 1 Bob, nil nobody); the answer's token becomes
        /// the person's.
        mutating func call(
            _ database: String, _ path: String, body: String?, method: String = "POST", as person: Int? = 0
        ) async throws -> RecordedExchange.Response {
            var query = [RecordedExchange.QueryItem(name: "ckAPIToken", value: run.apiToken)]
            let index = person.map { min($0, tokens.count - 1) }
            if let index, index >= 0 { query.append(.init(name: "ckWebAuthToken", value: tokens[index])) }
            let request = Replayer.Outgoing(
                method: method, path: "/database/1/\(run.container)/\(run.environment)/\(database)/\(path)",
                query: query, headers: body == nil ? [:] : ["content-type": "application/json"],
                body: body.map { .text($0) } ?? .none)
            let answer = try await send(request)
            if let index, index >= 0, let next = answer.headers[CredentialMask.webAuthTokenHeader], !next.isEmpty {
                tokens[index] = next
            }
            return answer
        }

        /// A step of the seed: its outcome fails when the answer is not a 200 without a per-entry error.
        mutating func step(
            _ database: String, _ path: String, _ body: String, as person: Int = 0
        ) async throws -> (Outcome?, JSONValue) {
            if let reason = run.skips(path) {
                return (Outcome(check: "setup POST \(database)/\(path)", problems: [], skipped: reason), .null)
            }
            let answer = try await call(database, path, body: body, as: person)
            let json = answer.body.jsonValue ?? .null
            let codes = ConformanceRun.errorCodes(in: json)
            guard answer.status != 200 || !codes.isEmpty else { return (nil, json) }
            let problem =
                "\(path): the seed's request answered \(answer.status) \(codes.joined(separator: ", ")): "
                + ConformanceRun.excerpt(answer.body)
            return (Outcome(check: "setup POST \(database)/\(path)", problems: [problem]), json)
        }

        /// Signs the people in: Alice and Bob on serve, or takes the one user's token.
        mutating func signIn() async throws -> [Outcome] {
            switch run.people {
            case .token(let token):
                tokens = [token]
                let current = try await call("public", "users/current", body: nil, method: "GET")
                bob = current.body.jsonValue?["userRecordName"]?.stringValue ?? ""
                if current.status != 200 || bob.isEmpty {
                    let problem =
                        "users/current: the signed-in user's record name, asked first, answered \(current.status): "
                        + ConformanceRun.excerpt(current.body)
                    return [Outcome(check: "setup GET public/users/current", problems: [problem])]
                }
                return []
            case .signIn:
                var outcomes: [Outcome] = []
                for email in ["alice@example.com", "bob@example.com"] {
                    let answer = try await send(
                        Replayer.signIn(
                            email: email, name: nil, world: (run.container, run.environment), apiToken: run.apiToken))
                    let json = answer.body.jsonValue
                    tokens.append(json?["ckWebAuthToken"]?.stringValue ?? "")
                    bob = json?["userRecordName"]?.stringValue ?? ""
                    if answer.status != 200 || tokens.last?.isEmpty != false {
                        let problem = "auth/signin: \(email)'s sign-in answered \(answer.status)"
                        outcomes.append(Outcome(check: "setup POST auth/signin", problems: [problem]))
                    }
                }
                return outcomes
            }
        }

        /// Removes what an earlier run made, and what this one made once it is done: a run's zones and
        /// subscriptions, whatever their state (the answers are not checked).
        mutating func tidy() async throws {
            _ = try await call(
                "private", "zones/modify",
                body: #"{"operations":["#
                    + [lists, trips, fresh].map { #"{"operationType":"delete","zone":{"zoneID":\#($0)}}"# }
                    .joined(separator: ",") + "]}")
            _ = try await call(
                "private", "subscriptions/modify",
                body: #"{"operations":["#
                    + ["conformance-lists", "conformance-todos"].map {
                        #"{"operationType":"delete","subscription":{"subscriptionID":"\#($0)","subscriptionType":"zone"}}"#
                    }.joined(separator: ",") + "]}")
        }

        /// Alice (discoverable, a phone number) with a zone `ConformanceLists` holding `milk` (a title, a
        /// quantity and a place), `pic` (an uploaded asset) and a deleted record, a zone subscription
        /// `conformance-lists`, and a zone `ConformanceTrips` whose record `trip` roots a share to Bob
        /// (discoverable, a phone number), who has not accepted it.
        mutating func seed() async throws -> [Outcome] {
            var outcomes: [Outcome] = []
            func keep(_ result: (Outcome?, JSONValue)) -> JSONValue {
                if let outcome = result.0 { outcomes.append(outcome) }
                return result.1
            }
            for (person, phone) in [(0, "+15550100001"), (1, "+15550100002")] where person < tokens.count {
                _ = keep(
                    try await step(
                        "public", "users/settings", #"{"phoneNumber":"\#(phone)","discoverable":true}"#, as: person))
            }
            // Development creates a LOCATION field without indexes, as CloudKit does: index it to sort by it.
            _ = keep(
                try await step(
                    "public", "schema/extend",
                    #"{"schema":{"recordTypes":[{"name":"\#(todo)","fields":[{"name":"spot","type":"LOCATION","#
                        + #""indexes":["QUERYABLE","SORTABLE"]}]}]}}"#))
            _ = keep(
                try await step(
                    "private", "zones/modify",
                    #"{"operations":[{"operationType":"create","zone":{"zoneID":\#(lists)}},"#
                        + #"{"operationType":"create","zone":{"zoneID":\#(trips)}}]}"#))
            let asset = try await upload(
                keep(
                    try await step(
                        "private", "assets/upload",
                        #"{"zoneID":\#(lists),"tokens":[{"recordName":"pic","recordType":"\#(todo)","#
                            + #""fieldName":"photo"}]}"#)))
            if case .failure(let problem) = asset {
                outcomes.append(Outcome(check: "setup POST the asset's bytes", problems: [problem.description]))
            }
            let photo = (try? asset.get()).map { #","photo":{"value":\#($0),"type":"ASSETID"}"# } ?? ""
            _ = keep(
                try await step(
                    "private", "records/modify",
                    #"{"zoneID":\#(lists),"operations":[{"operationType":"create","record":{"recordName":"milk","#
                        + #""recordType":"\#(todo)","fields":{"title":{"value":"Milk","type":"STRING"},"#
                        + #""qty":{"value":2,"type":"INT64"},"#
                        + #""spot":{"value":{"latitude":48.86,"longitude":2.34},"type":"LOCATION"}}}},"#
                        + #"{"operationType":"create","record":{"recordName":"pic","recordType":"\#(todo)","#
                        + #""fields":{"title":{"value":"Pic","type":"STRING"},"#
                        + #""spot":{"value":{"latitude":40.7,"longitude":-74.0},"type":"LOCATION"}\#(photo)}}},"#
                        + #"{"operationType":"create","record":{"recordName":"old","recordType":"\#(todo)","#
                        + #""fields":{}}}]}"#))
            _ = keep(
                try await step(
                    "private", "records/modify",
                    #"{"zoneID":\#(lists),"operations":[{"operationType":"forceDelete","record":{"#
                        + #""recordName":"old"}}]}"#))
            _ = keep(
                try await step(
                    "private", "subscriptions/modify",
                    #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"conformance-lists","#
                        + #""subscriptionType":"zone","zoneID":\#(lists)}}]}"#))
            let shared = keep(
                try await step(
                    "private", "records/modify",
                    #"{"zoneID":\#(trips),"operations":[{"operationType":"create","record":{"recordName":"trip","#
                        + #""recordType":"ConformanceTrip","fields":{"name":{"value":"Lisbon","type":"STRING"}}}},"#
                        + #"{"operationType":"create","record":{"recordType":"cloudkit.share","#
                        + #""forRecord":{"recordName":"trip"},"publicPermission":"NONE","participants":[{"#
                        + #""userIdentity":{"lookupInfo":{"emailAddress":"bob@example.com"}},"#
                        + #""permission":"READ_WRITE","type":"USER","acceptanceStatus":"UNKNOWN"}]}}]}"#))
            shortGUID = shared["records"]?.elements.compactMap { $0["shortGUID"]?.stringValue }.first ?? ""
            return outcomes
        }

        /// Sends the asset's bytes to the URL `assets/upload` answered: the asset's dictionary as JSON text.
        mutating func upload(_ answer: JSONValue) async throws -> Result<String, UploadProblem> {
            guard let url = answer["tokens"]?[0]?["url"]?.stringValue else {
                return .failure(UploadProblem("assets/upload answered no upload URL"))
            }
            let uploaded = try await send(
                Replayer.Outgoing(
                    method: "POST", path: url, query: [], headers: [:], body: .bytes(Data("picture bytes".utf8))))
            guard uploaded.status == 200, let file = uploaded.body.jsonValue?["singleFile"] else {
                return .failure(
                    UploadProblem(
                        "the asset's bytes answered \(uploaded.status): \(ConformanceRun.excerpt(uploaded.body))"))
            }
            return .success(file.jsonText())
        }

        struct UploadProblem: Error, CustomStringConvertible {
            var description: String
            init(_ description: String) { self.description = description }
        }

        /// Sends one example and checks its answer.
        mutating func check(_ example: Example) async throws -> Outcome {
            let name = example.description
            if let reason = run.skips(example.path) { return Outcome(check: name, problems: [], skipped: reason) }
            var body = example.body?.replacingOccurrences(of: "{BOB}", with: bob)
                .replacingOccurrences(of: "{SHORTGUID}", with: shortGUID)
            if body?.contains("{APNSTOKEN}") == true {
                if apnsToken == nil {
                    let created = try await call(
                        "private", "tokens/create", body: #"{"apnsEnvironment":"development"}"#)
                    apnsToken = created.body.jsonValue?["apnsToken"]?.stringValue
                }
                body = body?.replacingOccurrences(of: "{APNSTOKEN}", with: apnsToken ?? "")
            }
            let answer = try await call(
                example.database, example.path, body: body, method: example.method, as: example.asBob ? 1 : 0)
            if example.path == "tokens/create" { apnsToken = answer.body.jsonValue?["apnsToken"]?.stringValue }
            return Outcome(check: name, problems: run.problems(of: example, status: answer.status, body: answer.body))
        }

        /// Sends an example's request with a body that is not JSON: the error dictionary with `BAD_REQUEST`.
        mutating func refusal(_ example: Example) async throws -> Outcome {
            let name = "\(example.description), malformed"
            if let reason = run.skips(example.path) { return Outcome(check: name, problems: [], skipped: reason) }
            let answer = try await call(example.database, example.path, body: #"{"zones": "#, as: example.asBob ? 1 : 0)
            var problems: [String] = []
            let json = answer.body.jsonValue ?? .null
            if answer.status != 400 { problems.append("\(example.path): status \(answer.status), not 400") }
            problems += run.table.problems(json, as: "dict:Error", at: example.path)
            if let code = json["serverErrorCode"], code != .string("BAD_REQUEST") {
                problems.append("\(example.path).serverErrorCode: \(code.jsonText()), not \"BAD_REQUEST\"")
            }
            if run.table.endpoint(example.path)?.errors.contains("BAD_REQUEST") != true {
                problems.append("\(example.path): its row in the table does not list BAD_REQUEST")
            }
            return Outcome(check: name, problems: problems)
        }

        /// A request that needs a user, sent without one: `AUTHENTICATION_REQUIRED` with a `redirectURL`.
        mutating func signedOut() async throws -> Outcome {
            let answer = try await call("public", "users/caller", body: nil, method: "GET", as: nil)
            var problems: [String] = []
            let json = answer.body.jsonValue ?? .null
            if answer.status != 421 { problems.append("users/caller: status \(answer.status), not 421") }
            problems += run.table.problems(json, as: "dict:Error", at: "users/caller")
            if json["serverErrorCode"] != .string("AUTHENTICATION_REQUIRED") {
                problems.append(
                    "users/caller.serverErrorCode: \(json["serverErrorCode"]?.jsonText() ?? "missing"), "
                        + "not \"AUTHENTICATION_REQUIRED\"")
            }
            if json["redirectURL"]?.stringValue == nil { problems.append("users/caller: no redirectURL") }
            return Outcome(check: "GET public/users/caller, signed out", problems: problems)
        }
    }
}
