import CloudKitWire
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ShareKit
import SharelaneTestSupport
import Testing

/// The HTTP store against a scripted CloudKit stand-in on loopback: retries, token rotation, signing, and
/// secrets kept out of the logs.
@Suite(.serialized) struct WebServicesClientTests {
    /// What the stand-in saw, and what it answers next.
    actor Script {
        var answers: [(status: Int, body: String, token: String?)]
        var seen: [(path: String, query: String, headers: [String: String], body: String)] = []

        init(_ answers: [(Int, String, String?)]) {
            self.answers = answers.map { (status: $0.0, body: $0.1, token: $0.2) }
        }

        func next(path: String, query: String, headers: [String: String], body: String) -> (Int, String, String?) {
            seen.append((path, query, headers, body))
            return answers.isEmpty
                ? (500, #"{"serverErrorCode":"INTERNAL_ERROR","reason":"script ran out"}"#, nil) : answers.removeFirst()
        }
    }

    /// Runs a stand-in that answers every request from `script`, then `body` with its base URL.
    func withStandIn(_ script: Script, _ body: @Sendable (String) async throws -> Void) async throws {
        let router = Router(context: BasicRequestContext.self)
        let handler: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            var request = request
            let data = try await request.collectBody(upTo: 1 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.rawName] = field.value }
            let (status, text, token) = await script.next(
                path: request.uri.path, query: request.uri.query ?? "", headers: headers,
                body: String(buffer: data))
            var fields = HTTPFields()
            fields[.contentType] = "application/json"
            if let token, let name = HTTPField.Name(WireSpelling.webAuthTokenHeader) { fields[name] = token }
            return Response(
                status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        router.post("/**", use: handler)
        router.get("/**", use: handler)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            }, logger: EmulatorHarness.quiet)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.run() }
            var iterator = ports.makeAsyncIterator()
            let port = await iterator.next() ?? 0
            do {
                try await body("http://127.0.0.1:\(port)")
                group.cancelAll()
            } catch {
                group.cancelAll()
                throw error
            }
        }
    }

    static let zoneList = #"{"zones":[{"zoneID":{"zoneName":"_defaultZone","ownerRecordName":"_me"}}]}"#

    @Test func throttlingAndUnavailabilityAreRetriedThenGivenUp() async throws {
        let script = Script([
            (503, #"{"serverErrorCode":"TRY_AGAIN_LATER","reason":"busy","retryAfter":0.05}"#, nil),
            (429, #"{"serverErrorCode":"THROTTLED","reason":"slow down","retryAfter":0.05}"#, nil),
            (200, Self.zoneList, nil),
            (503, "Service Unavailable", nil), (503, "Service Unavailable", nil), (503, "Service Unavailable", nil),
        ])
        try await withStandIn(script) { base in
            var variables = [
                "CLOUDKIT_API_TOKEN": "api", "CLOUDKIT_WEB_AUTH_TOKEN": "web-1", "CLOUDKIT_BASE_URL": base,
            ]
            variables["CLOUDKIT_BASE_URL"] = base
            let endpoint = try WebServicesEndpoint.cloudKit(
                environmentVariables: variables, container: "iCloud.com.example", environment: "development")
            let store = WebServicesStore(
                endpoint: endpoint, retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: 0.2),
                logger: EmulatorHarness.quiet)
            let zones = try await store.listZones(in: .private, as: defaultOwnerName)
            #expect(zones.map(\.zoneID.zoneName) == ["_defaultZone"])
            #expect(store.requestCount == 3)
            // Three 503s in a row: the third attempt is the last, and the error keeps CloudKit's meaning.
            await #expect {
                try await store.listZones(in: .private, as: defaultOwnerName)
            } throws: { error in
                (error as? ShareError)?.code == .tryAgainLater
            }
            #expect(store.requestCount == 6)
        }
    }

    @Test("an answer with a number no field can hold is a clear error, not a crash")
    func outOfRangeNumbersInAnswersAreErrors() async throws {
        let record =
            #"{"records":[{"recordName":"r","recordType":"T","recordChangeTag":"1","fields":{"when":{"type":"TIMESTAMP","value":1e300}}}]}"#
        let script = Script([(200, record, nil)])
        try await withStandIn(script) { base in
            let endpoint = try WebServicesEndpoint.cloudKit(
                environmentVariables: [
                    "CLOUDKIT_API_TOKEN": "api-token", "CLOUDKIT_WEB_AUTH_TOKEN": "web-token",
                    "CLOUDKIT_BASE_URL": base,
                ], container: "iCloud.com.example", environment: "development")
            let store = WebServicesStore(
                endpoint: endpoint, retryPolicy: RetryPolicy(maxAttempts: 1), logger: EmulatorHarness.quiet)
            await #expect {
                _ = try await store.lookupRecords(["r"], in: .defaultZone, database: .public, as: defaultOwnerName)
            } throws: { error in
                let text = "\(error)"
                return text.contains("TIMESTAMP value 1e+300 is out of range") && text.contains("cannot read")
            }
        }
    }

    @Test("a server that reflects the request in its error never hands the tokens to the caller")
    func reflectedTokensAreMasked() async throws {
        let api = "api-SECRET+/=1234"
        let web = "web-SECRET-5678"
        let script = Script([
            (
                400,
                #"{"serverErrorCode":"BAD_REQUEST","reason":"bad request ?ckAPIToken=api-SECRET%2B%2F%3D1234&ckWebAuthToken=web-SECRET-5678"}"#,
                nil
            ),
            (500, "<html>internal error for api-SECRET+\\/=1234 and web-SECRET-5678</html>", nil),
        ])
        try await withStandIn(script) { base in
            let endpoint = try WebServicesEndpoint.cloudKit(
                environmentVariables: [
                    "CLOUDKIT_API_TOKEN": api, "CLOUDKIT_WEB_AUTH_TOKEN": web, "CLOUDKIT_BASE_URL": base,
                ], container: "iCloud.com.example", environment: "development")
            let store = WebServicesStore(
                endpoint: endpoint, retryPolicy: RetryPolicy(maxAttempts: 1, baseDelay: 0.01, maxDelay: 0.01),
                logger: EmulatorHarness.quiet)
            for _ in 0..<2 {
                do {
                    _ = try await store.listZones(in: .private, as: defaultOwnerName)
                    Issue.record("the stand-in's error was not reported")
                } catch {
                    let text = "\(error)"
                    #expect(!text.contains("SECRET"), "a token reached the caller: \(text)")
                    #expect(text.contains("***"), "\(text)")
                }
            }
        }
    }

    @Test func cloudKitSendsTokensRotatesThemAndSignsThePublicDatabase() async throws {
        let key = P256.Signing.PrivateKey()
        let scratch = try TemporaryDirectory("key")
        let keyFile = scratch.url.appendingPathComponent("eckey.pem")
        try key.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        let script = Script([
            (200, #"{"records":[]}"#, nil),
            (200, Self.zoneList, "web+3/="),
            (200, #"{"userRecordName":"_me"}"#, "web-4"),
            (
                421,
                #"{"serverErrorCode":"AUTHENTICATION_REQUIRED","reason":"session expired","redirectURL":"https://x"}"#,
                nil
            ),
        ])
        let lines = LogLines()
        let logger = Logger(label: "test") { _ in CapturingLogHandler(lines: lines) }
        try await withStandIn(script) { base in
            let variables = [
                "CLOUDKIT_API_TOKEN": "api+token", "CLOUDKIT_WEB_AUTH_TOKEN": "web-1", "CLOUDKIT_BASE_URL": base + "/",
                "CLOUDKIT_KEY_ID": "key-7", "CLOUDKIT_PRIVATE_KEY_FILE": keyFile.path,
            ]
            let endpoint = try WebServicesEndpoint.cloudKit(
                environmentVariables: variables, container: "iCloud.com.example", environment: "production")
            var store = WebServicesStore(endpoint: endpoint, logger: logger)
            #expect(!store.capabilities.actsAsAnyUser)
            #expect(store.displayName == "cloudkit:iCloud.com.example/production")
            store = WebServicesStore(endpoint: endpoint, logger: logger)
            // The public database's records: signed server-to-server.
            _ = try await store.queryRecords(
                RecordQuery(recordType: "Note"), in: .defaultZone, database: .public, as: defaultOwnerName)
            // The private database: the web auth token.
            _ = try await store.listZones(in: .private, as: defaultOwnerName)
            // Who the user is: the web auth token (a signature would name the key's owner instead).
            #expect(try await store.currentUser(as: defaultOwnerName).recordName == "_me")
            await #expect {
                try await store.listZones(in: .private, as: defaultOwnerName)
            } throws: { error in
                let shareError = error as? ShareError
                return shareError?.code == .authenticationRequired
                    && shareError?.reason.contains("CLOUDKIT_WEB_AUTH_TOKEN") == true
            }
        }
        let seen = await script.seen
        #expect(seen.count == 4)
        // 1: the public database, signed server-to-server, without the API token.
        #expect(seen[0].path == "/database/1/iCloud.com.example/production/public/records/query")
        #expect(seen[0].headers["X-Apple-CloudKit-Request-KeyID"] == "key-7")
        let date = try #require(seen[0].headers["X-Apple-CloudKit-Request-ISO8601Date"])
        let der = try #require(
            seen[0].headers["X-Apple-CloudKit-Request-SignatureV1"].flatMap { Data(base64Encoded: $0) })
        let bodyHash = Data(SHA256.hash(data: Data(seen[0].body.utf8))).base64EncodedString()
        let message = "\(date):\(bodyHash):\(seen[0].path)"
        #expect(
            key.publicKey.isValidSignature(
                try P256.Signing.ECDSASignature(derRepresentation: der), for: Data(message.utf8)))
        #expect(seen[0].query.isEmpty)
        #expect(seen[0].body.contains(#""recordType":"Note""#))
        // 2, 3: the API token and the web auth token, rotated from each answer; no signature.
        #expect(seen[1].query == "ckAPIToken=api%2Btoken&ckWebAuthToken=web-1")
        #expect(seen[1].headers["X-Apple-CloudKit-Request-SignatureV1"] == nil)
        #expect(seen[2].path == "/database/1/iCloud.com.example/production/public/users/current")
        #expect(seen[2].query == "ckAPIToken=api%2Btoken&ckWebAuthToken=web%2B3%2F%3D")
        #expect(seen[2].headers["X-Apple-CloudKit-Request-SignatureV1"] == nil)
        #expect(seen[3].query == "ckAPIToken=api%2Btoken&ckWebAuthToken=web-4")
        // No token or key ever reaches the log.
        let logged = lines.all.joined(separator: "\n")
        #expect(!logged.isEmpty)
        for secret in ["api+token", "api%2Btoken", "web-1", "web+3/=", "web%2B3", "web-4", key.pemRepresentation] {
            #expect(!logged.contains(secret), "the log shows a secret")
        }
    }
}

extension WebServicesClientTests {
    @Test func cloudKitActsOnlyAsTheSignedInUser() async throws {
        let script = Script([
            (200, #"{"userRecordName":"_me","firstName":"Ann"}"#, "web-2"),
            (200, #"{"users":[{"userRecordName":"_me","emailAddress":"ann@example.com"}]}"#, "web-3"),
            (200, #"{"users":[{"userRecordName":"_bob","emailAddress":"bob@example.com"}]}"#, "web-4"),
        ])
        try await withStandIn(script) { base in
            let endpoint = try WebServicesEndpoint.cloudKit(
                environmentVariables: [
                    "CLOUDKIT_API_TOKEN": "api", "CLOUDKIT_WEB_AUTH_TOKEN": "web-1", "CLOUDKIT_BASE_URL": base,
                ], container: "iCloud.com.example", environment: "development")
            let store = WebServicesStore(endpoint: endpoint, logger: EmulatorHarness.quiet)
            let ann = try await store.signIn(email: "ann@example.com", name: nil)
            #expect(ann.recordName == "_me")
            await #expect {
                try await store.signIn(email: "bob@example.com", name: nil)
            } throws: { error in
                (error as? ShareError)?.code == .authenticationFailed
            }
            // Acting as someone else is refused before any request is sent.
            let sent = store.requestCount
            await #expect {
                try await store.listZones(in: .private, as: "_bob")
            } throws: { error in
                (error as? ShareError)?.code == .authenticationFailed
            }
            #expect(store.requestCount == sent)
        }
    }

    @Test func cloudKitWithoutCredentialsSaysWhatToSet() {
        #expect {
            try WebServicesEndpoint.cloudKit(environmentVariables: [:], container: "c", environment: "development")
        } throws: { error in
            "\(error)".contains("CLOUDKIT_API_TOKEN") && "\(error)".contains("CLOUDKIT_KEY_ID")
        }
        #expect {
            try WebServicesEndpoint.cloudKit(
                environmentVariables: ["CLOUDKIT_KEY_ID": "k"], container: "c", environment: "development")
        } throws: { error in
            "\(error)".contains("CLOUDKIT_PRIVATE_KEY_FILE")
        }
    }
}

extension WebServicesClientTests {
    @Test func recordsThatCloudKitAsksToWaitForAreSentAgain() async throws {
        let script = Script([
            (
                200,
                #"{"records":[{"recordName":"a","recordType":"T","recordChangeTag":"1"},"#
                    + #"{"recordName":"b","serverErrorCode":"THROTTLED","reason":"wait","retryAfter":0.05}]}"#, nil
            ),
            (200, #"{"records":[{"recordName":"b","recordType":"T","recordChangeTag":"2"}]}"#, nil),
        ])
        try await withStandIn(script) { base in
            let endpoint = try WebServicesEndpoint.cloudKit(
                environmentVariables: [
                    "CLOUDKIT_API_TOKEN": "api", "CLOUDKIT_WEB_AUTH_TOKEN": "web-1", "CLOUDKIT_BASE_URL": base,
                ], container: "iCloud.com.example", environment: "development")
            let store = WebServicesStore(
                endpoint: endpoint, retryPolicy: RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: 0.2),
                logger: EmulatorHarness.quiet)
            let zone = ZoneID(zoneName: "Z")
            let outcomes = try await store.modifyRecords(
                [
                    .init(.create, Record(recordName: "a", recordType: "T", zoneID: zone)),
                    .init(.create, Record(recordName: "b", recordType: "T", zoneID: zone)),
                ], in: zone, database: .private, atomic: false, as: defaultOwnerName)
            #expect(outcomes.map { $0.savedRecord?.changeTag } == ["1", "2"])
            #expect(store.requestCount == 2)
        }
        let seen = await script.seen
        #expect(seen.count == 2)
        #expect(seen[1].body.contains(#""recordName":"b""#))
        #expect(!seen[1].body.contains(#""recordName":"a""#))
    }
}

/// Collects log lines for inspection.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}

struct CapturingLogHandler: LogHandler {
    let lines: LogLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        lines.append("\(event.level) \(event.message) \(merged)")
    }
}
