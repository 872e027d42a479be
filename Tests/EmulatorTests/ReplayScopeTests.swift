import CloudKitWire
import Foundation
import Parity
import SharelaneTestSupport
import Synchronization
import Testing

/// What a replay may send (`ReplayScope` over the catalogue of operations), and where it puts the replay's
/// credentials: a recording is data, never a program.
struct ReplayScopeTests {
    typealias Exchange = RecordedExchange

    static let scope = ReplayScope(
        routes: WireOperation.requestPatterns.map { .init(method: $0.method.rawValue, pattern: $0.pattern) })
    static let modify = "/database/1/iCloud.test/development/private/records/modify"

    static func request(
        _ method: String, _ path: String, headers: [String: String] = [:], body: Exchange.Body = .none
    ) -> Exchange.Request {
        Exchange.Request(
            method: method, path: path,
            query: [
                .init(name: "ckAPIToken", value: "<api-token>"),
                .init(name: "ckWebAuthToken", value: "<web-auth-token:person-1>"),
            ],
            headers: headers, body: body)
    }

    @Test("every request of the project's recordings is one of CloudKit Web Services")
    func theCorpusIsAdmitted() throws {
        let root = BuiltProducts.packageRoot.appendingPathComponent("Tests/Parity").path
        let folders = try FileManager.default.contentsOfDirectory(atPath: root).filter { !$0.hasPrefix(".") }
        #expect(folders.count >= 3, "\(folders)")
        var count = 0
        for folder in folders {
            for (file, exchange) in try Recording.read(root + "/" + folder) {
                count += 1
                #expect(Self.scope.refusal(of: exchange.request) == nil, "\(file)")
            }
        }
        #expect(count >= 60, "\(count) exchanges")
    }

    @Test("a host, a URL, a path that climbs, serve's own endpoints, the console and the sign-in form are refused")
    func whatActsElsewhereIsRefused() {
        let refused: [Exchange.Request] = [
            Self.request("POST", "http://127.0.0.1:1" + Self.modify),
            Self.request("POST", "//127.0.0.1:1" + Self.modify),
            Self.request("POST", Self.modify, headers: ["host": "127.0.0.1:1"]),
            Self.request("POST", Self.modify, headers: ["x-forwarded-host": "evil.example"]),
            Self.request("POST", Self.modify, headers: ["forwarded": "host=evil.example"]),
            Self.request("POST", Self.modify, headers: ["content-type": "text/plain\r\nHost: evil.example"]),
            Self.request("POST", Self.modify + "/../../../../../../_sharelane/reset"),
            Self.request("POST", "/database/1/%2e%2e/%2E%2E/private/records/modify"),
            Self.request("POST", "/database/1/iCloud.test%2F..%2F../development/private/records/modify"),
            Self.request("POST", "/database/1/iCloud.test/development/private/records/modify?x=1"),
            Self.request("GET", Self.modify),
            Self.request("POST", "/database/1/iCloud.test/development/private/records/delete"),
            Self.request("POST", "/_sharelane/reset", body: .json(.object(["to": .string("empty")]))),
            Self.request("DELETE", "/_sharelane/worlds/iCloud.test"),
            Self.request("POST", "/console/signin", body: .text("token=<api-token>")),
            Self.request("GET", "/"),
            Self.request("GET", "/auth/signin"),
            Self.request("POST", "/auth/signin/form"),
        ]
        for request in refused {
            #expect(Self.scope.refusal(of: request) != nil, "\(request.method) \(request.path) \(request.headers)")
        }
        #expect(
            Self.scope.refusal(of: Self.request("POST", "/_sharelane/reset"))
                == "/_sharelane/reset is one of sharelane serve's own endpoints, which act on the whole server: a "
                + "replay sends only CloudKit Web Services requests")
        let admitted = [
            Self.request("POST", Self.modify, headers: ["content-type": "text/plain"]),
            Self.request("GET", "/database/1/iCloud.test/development/shared/zones/list"),
            Self.request("POST", "/device/1/iCloud.test/development/tokens/create"),
            Self.request("POST", "/auth/signin"),
            Self.request("GET", "/webcourier/aps"),
            Self.request("GET", "/assets/download/fnv1a64:c18a75c6a8457530/$%7Bf%7D"),
        ]
        for request in admitted {
            #expect(Self.scope.refusal(of: request) == nil, "\(request.method) \(request.path)")
        }
    }

    @Test("a refused request is never sent, the replay goes on, and the refusal fails the run whatever is allowed")
    func aRefusedRequestIsNotSentAndFailsTheRun() async throws {
        let answer = Exchange.Response(status: 200, headers: [:], body: .json(.object([:])))
        let recording: [(file: String, exchange: Exchange)] = [
            ("0001-reset.json", Exchange(request: Self.request("POST", "/_sharelane/reset"), response: answer)),
            ("0002-modify.json", Exchange(request: Self.request("POST", Self.modify), response: answer)),
        ]
        let sent = Mutex<[String]>([])
        let allow = try AllowList(text: "request: on purpose\nstatus: on purpose\n", file: "allowed.txt")
        let report = try await Replayer(
            exchanges: recording, apiToken: "the-api-token", scope: Self.scope, allowList: allow
        )
        .run { request in
            sent.withLock { $0.append(request.path) }
            return answer
        }
        #expect(!sent.withLock { $0 }.contains("/_sharelane/reset"))
        #expect(sent.withLock { $0 }.last == Self.modify)
        #expect(report.exchanges.map(\.refused).map { $0 != nil } == [true, false])
        #expect(!report.succeeded)
        #expect(report.summary == "2 exchanges, 1 the same, 0 differ, 1 refused")
        #expect(report.json.contains("\"refused\" : 1"))
        #expect(report.junitXML(recording: "r").contains("failures=\"1\""))
    }

    @Test("the replay's credentials go where a request sends credentials, never into a record, a path or a form")
    func credentialsGoOnlyWhereCredentialsAreSent() async throws {
        let record: JSONValue = .object([
            "operations": .array([
                .object([
                    "operationType": .string("create"),
                    "record": .object([
                        "recordName": .string("note"),
                        "fields": .object([
                            "title": .object(["value": .string("<api-token>")]),
                            "body": .object(["value": .string("<web-auth-token:person-1>")]),
                        ]),
                    ]),
                ])
            ]),
            "ckWebAuthToken": .string("<web-auth-token:person-1>"),
        ])
        let answer = Exchange.Response(status: 200, headers: [:], body: .json(.object([:])))
        let recording: [(file: String, exchange: Exchange)] = [
            (
                "0001-modify.json",
                Exchange(request: Self.request("POST", Self.modify, body: .json(record)), response: answer)
            )
        ]
        let sent = Mutex<[Exchange.Request]>([])
        _ = try await Replayer(exchanges: recording, apiToken: "the-api-token", scope: Self.scope).run { request in
            sent.withLock { $0.append(request) }
            if request.path == "/auth/signin" {
                return Exchange.Response(
                    status: 200, headers: [:], body: .json(.object(["ckWebAuthToken": .string("the-users-token")])))
            }
            return answer
        }
        let modify = try #require(sent.withLock { $0 }.last)
        #expect(modify.path == Self.modify)
        #expect(modify.query.map(\.value) == ["the-api-token", "the-users-token"])
        let body = try #require(modify.body.jsonValue)
        #expect(body["ckWebAuthToken"]?.stringValue == "the-users-token")
        let text = body.jsonText()
        #expect(!text.contains("the-api-token") && text.contains("<api-token>"), "\(text)")
        #expect(text.contains("\"value\":\"<web-auth-token:person-1>\""), "\(text)")
    }
}
