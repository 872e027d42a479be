import AsyncHTTPClient
import Emulator
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport

/// The console in process: the emulator on a free loopback port over a small store, and a client that sees
/// each answer as it came (no redirect followed, cookies kept by hand as a browser would keep them).
struct ConsoleHarness {
    static let apiToken = "console-test-token+/="

    /// A page as it came back.
    struct Page {
        var status: Int
        var headers: HTTPHeaders
        var text: String

        var location: String? { headers.first(name: "Location") }
        /// The page's content, without the header that every page has.
        var main: String {
            guard let start = text.range(of: "<main>"), let end = text.range(of: "</main>") else { return "" }
            return String(text[start.upperBound..<end.lowerBound])
        }
        var setCookie: String? { headers.first(name: "Set-Cookie") }
    }

    /// The store: alice shares the zone `Secrets` with bob (accepted) and not with carol; alice's record names
    /// and fields hold markup that must stay text.
    struct Fixture {
        let store: SQLiteStore
        let alice: User
        let bob: User
        let carol: User
    }

    static func fixture() async throws -> Fixture {
        let store = try SQLiteStore.inMemory(logger: EmulatorHarness.quiet)
        let alice = try await store.signIn(email: "alice@example.com", name: "Alice <b>Appleseed</b>")
        let bob = try await store.signIn(email: "bob@example.com", name: "Bob")
        let carol = try await store.signIn(email: "carol@example.com", name: "Carol")
        let secrets = ZoneID(zoneName: "Secrets")
        let open = ZoneID(zoneName: "Open")
        _ = try await store.modifyZones([.init(.create, secrets)], in: .private, as: alice.recordName)
        _ = try await store.modifyZones([.init(.create, open)], in: .private, as: carol.recordName)
        var share = Share.zoneWide(secrets, title: "Alice's <secrets>")
        share.participants = [Participant(userRecordName: bob.recordName, permission: .readOnly)]
        let outcomes = try await store.modifyRecords(
            [
                RecordOperation(
                    .create,
                    Record(
                        recordName: "plan", recordType: "Note", zoneID: secrets,
                        fields: ["title": .string("<script>alert(1)</script>"), "pages": .int64(3)])),
                RecordOperation(
                    .create,
                    Record(
                        recordName: "step-1", recordType: "Note", zoneID: secrets, fields: ["title": .string("First")],
                        parent: "plan")),
                RecordOperation(.create, share: share),
            ], in: secrets, database: .private, atomic: true, as: alice.recordName)
        guard case .savedShare(let saved)? = outcomes.last, let url = saved.url else {
            throw ShareError(.internalError, "the fixture's share was not saved: \(outcomes)")
        }
        _ = try await store.acceptShare(url: url, as: bob.recordName)
        let note = try await store.modifyRecords(
            [RecordOperation(.create, Record(recordName: "carol-note", recordType: "Note", zoneID: open))],
            in: open, database: .private, atomic: true, as: carol.recordName)
        if let error = note.first?.error { throw error }
        return Fixture(store: store, alice: alice, bob: bob, carol: carol)
    }

    /// Runs `body` with the console of an emulator over the fixture, and a log of what the server wrote.
    static func with<T: Sendable>(
        _ body: @Sendable (ConsoleHarness, Fixture) async throws -> T
    ) async throws -> T {
        let fixture = try await fixture()
        let lines = LogLines()
        let logger = Logger(label: "sharelane.test") { _ in CapturingLogHandler(lines: lines) }
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))
        do {
            let result = try await InProcessEmulator.with(store: fixture.store, apiToken: apiToken, logger: logger) {
                base in
                try await body(ConsoleHarness(base: base, client: client, log: lines), fixture)
            }
            try await client.shutdown()
            return result
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    let base: String
    let client: HTTPClient
    let log: LogLines

    /// `GET path`, with the session cookie when given.
    func get(_ path: String, cookie: String? = nil) async throws -> Page {
        var request = HTTPClientRequest(url: base + path)
        if let cookie { request.headers.add(name: "Cookie", value: cookie) }
        return try await send(request)
    }

    /// `POST path` with a form body.
    func post(
        _ path: String, form: [String: String], cookie: String? = nil, headers: [(String, String)] = []
    ) async throws -> Page {
        let body = form.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.formEncoded($0.value))" }.joined(
            separator: "&")
        return try await post(
            path, body: body, cookie: cookie,
            headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers)
    }

    /// `POST path` with `body` as it is.
    func post(
        _ path: String, body: String, cookie: String? = nil, headers: [(String, String)] = []
    ) async throws -> Page {
        var request = HTTPClientRequest(url: base + path)
        request.method = .POST
        if let cookie { request.headers.add(name: "Cookie", value: cookie) }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: body))
        return try await send(request)
    }

    /// Signs in with the API token in the sign-in form, as a person does, and returns the cookie to send.
    func signIn() async throws -> String {
        let page = try await post("/console/signin", form: ["token": Self.apiToken, "next": "/"])
        guard page.status == 303, let cookie = page.setCookie?.split(separator: ";").first else {
            throw ShareError(.internalError, "signing in answered \(page.status): \(page.text)")
        }
        return String(cookie)
    }

    private func send(_ request: HTTPClientRequest) async throws -> Page {
        let response = try await client.execute(request, timeout: .seconds(TestDeadlines.httpRead.components.seconds))
        let buffer = try await response.body.collect(upTo: 16 << 20)
        return Page(
            status: Int(response.status.code), headers: response.headers,
            text: String(decoding: buffer.readableBytesView, as: UTF8.self))
    }

    static func formEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
