import CloudKitWire
import Crypto
import Foundation
import ShareKit
import SharelaneTestSupport
import Testing

/// Raw HTTP against the emulator, one test per authentication rule of CloudKit (Docs/CloudKit.md,
/// "Authentication"): the API token alone, the sign-in redirect, rotating tokens with and without
/// `--strict-tokens`, and server-to-server signatures.
@Suite(.serialized) struct AuthenticationRuleTests {
    typealias H = EmulatorHarness

    /// Alice saves a public note through the HTTP client.
    static func publicNote(_ base: String) async throws -> UserRecordName {
        let store = H.store(base)
        let alice = try await store.signIn(email: "alice@example.com", name: "Alice Appleseed").recordName
        let saved = try await store.modifyRecords(
            [
                .init(
                    .create,
                    Record(
                        recordName: "note", recordType: "Note", zoneID: .defaultZone,
                        fields: ["title": .string("hello")]))
            ], in: .defaultZone, database: .public, atomic: false, as: alice)
        #expect(saved[0].error == nil, "\(saved)")
        return alice
    }

    static let query = #"{"query":{"recordType":"Note"}}"#
    static let create =
        #"{"operations":[{"operationType":"create","record":{"recordName":"other","recordType":"Note","#
        + #""fields":{"title":{"value":"anonymous"}}}}]}"#

    @Test("the API token alone reads the public database and nothing else")
    func apiTokenOnly() async throws {
        try await H.withEmulator { base in
            _ = try await Self.publicNote(base)
            let apiOnly = ["ckAPIToken": H.apiToken]
            // Reads of the public database answer, without a next token (there is no user to give one to).
            var answer = try await H.raw(
                base, H.databasePath("public", "records/query"), query: apiOnly, body: Self.query)
            #expect(answer.status == 200, "\(answer.text)")
            #expect((answer.json["records"] as? [[String: Any]])?.first?["recordName"] as? String == "note")
            #expect(answer.nextToken == nil)
            answer = try await H.raw(
                base, H.databasePath("public", "records/lookup"), query: apiOnly,
                body: #"{"records":[{"recordName":"note"}]}"#)
            #expect(answer.status == 200, "\(answer.text)")
            answer = try await H.raw(base, H.databasePath("public", "zones/list"), query: apiOnly, method: "GET")
            #expect(answer.status == 200, "\(answer.text)")
            answer = try await H.raw(
                base, H.databasePath("public", "zones/lookup"), query: apiOnly,
                body: #"{"zones":[{"zoneName":"_defaultZone"}]}"#)
            #expect(answer.status == 200, "\(answer.text)")

            // A write to the public database, and who-am-I, need a user: 421 with a way to sign in.
            for (path, body, method) in [
                ("records/modify", Self.create, "POST"), ("users/current", nil, "GET"),
            ] {
                answer = try await H.raw(
                    base, H.databasePath("public", path), query: apiOnly, body: body, method: method)
                #expect(answer.status == 421, "\(path): \(answer.text)")
                #expect(answer.json["serverErrorCode"] as? String == "AUTHENTICATION_REQUIRED")
                #expect((answer.json["redirectURL"] as? String)?.hasPrefix(base + "/auth/signin?ticket=") == true)
            }
            // The private and shared databases: 421 with a redirectURL, even for reads.
            for database in ["private", "shared"] {
                answer = try await H.raw(base, H.databasePath(database, "zones/list"), query: apiOnly, method: "GET")
                #expect(answer.status == 421, "\(database): \(answer.text)")
                #expect(answer.json["serverErrorCode"] as? String == "AUTHENTICATION_REQUIRED")
                #expect((answer.json["redirectURL"] as? String)?.hasPrefix(base + "/auth/signin?ticket=") == true)
            }
            // No API token at all is still AUTHENTICATION_FAILED.
            answer = try await H.raw(base, H.databasePath("public", "records/query"), body: Self.query)
            #expect(answer.status == 401)
            #expect(answer.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED")
            // The anonymous write changed nothing.
            let store = H.store(base)
            let bob = try await store.signIn(email: "bob@example.com", name: nil).recordName
            let other = try await store.lookupRecords(["other"], in: .defaultZone, database: .public, as: bob)
            #expect(other[0].error?.code == .notFound)
        }
    }

    @Test("a redirectURL leads to a sign-in page that hands the callback a web auth token, once")
    func signInRedirect() async throws {
        try await H.withEmulator { base in
            let refused = try await H.raw(
                base, H.databasePath("private", "zones/list"), query: ["ckAPIToken": H.apiToken], method: "GET")
            let redirect = try #require(refused.json["redirectURL"] as? String)
            let ticket = try #require(URLComponents(string: redirect)?.queryItems?.first { $0.name == "ticket" }?.value)
            let callback = "http://127.0.0.1:9/done?state=x"

            // The page: a form for an email address.
            var answer = try await H.raw(
                base, "/auth/signin", query: ["ticket": ticket, "callback": callback], method: "GET")
            #expect(answer.status == 200)
            #expect(answer.text.contains("name=\"emailAddress\""))
            #expect(answer.text.contains("action=\"/auth/signin/form\""))

            // The form: signs in and sends the browser to the callback with ckWebAuthToken.
            let form =
                "ticket=\(H.percentEncoded(ticket))&callback=\(H.percentEncoded(callback))"
                + "&emailAddress=mei%40example.com&name=Mei"
            answer = try await H.raw(
                base, "/auth/signin/form", body: form, contentType: "application/x-www-form-urlencoded")
            #expect(answer.status == 303, "\(answer.text)")
            let location = try #require(answer.location)
            #expect(location.hasPrefix("http://127.0.0.1:9/done?state=x&ckWebAuthToken="))
            let token = try #require(
                URLComponents(string: location)?.queryItems?.first { $0.name == "ckWebAuthToken" }?.value)
            answer = try await H.raw(
                base, H.databasePath("public", "users/current"),
                query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token], method: "GET")
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.json["emailAddress"] as? String == "mei@example.com")

            // The ticket is spent; a made-up one and a callback off this machine are refused.
            answer = try await H.raw(
                base, "/auth/signin/form", body: form, contentType: "application/x-www-form-urlencoded")
            #expect(answer.status == 403)
            #expect(answer.location == nil)
            answer = try await H.raw(base, "/auth/signin", query: ["ticket": "made-up"], method: "GET")
            #expect(answer.status == 403)
            let fresh = try await H.raw(
                base, H.databasePath("shared", "zones/list"), query: ["ckAPIToken": H.apiToken], method: "GET")
            let freshTicket = try #require(
                URLComponents(string: fresh.json["redirectURL"] as? String ?? "")?.queryItems?.first {
                    $0.name == "ticket"
                }?.value)
            answer = try await H.raw(
                base, "/auth/signin", query: ["ticket": freshTicket, "callback": "https://evil.example/steal"],
                method: "GET")
            #expect(answer.status == 400)
            answer = try await H.raw(
                base, "/auth/signin/form",
                body: "ticket=\(freshTicket)&callback=https%3A%2F%2Fevil.example%2F&emailAddress=eve%40example.com",
                contentType: "application/x-www-form-urlencoded")
            #expect(answer.status == 400)
            #expect(answer.location == nil)
            // Without a callback the page shows the token to paste.
            answer = try await H.raw(
                base, "/auth/signin/form", body: "ticket=\(freshTicket)&emailAddress=eve%40example.com",
                contentType: "application/x-www-form-urlencoded")
            #expect(answer.status == 200)
            #expect(answer.text.contains("<code>"))
        }
    }

    /// Uses `token` for `users/current`: the status and the next token.
    static func use(_ base: String, _ token: String) async throws -> (Int, String?) {
        let answer = try await H.raw(
            base, H.databasePath("public", "users/current"),
            query: ["ckAPIToken": H.apiToken, "ckWebAuthToken": token], method: "GET")
        return (answer.status, answer.nextToken)
    }

    @Test("by default rotated and previous tokens both stay good, as on the live service")
    func previousTokensStayGood() async throws {
        try await H.withEmulator { base in
            let (first, _) = try await H.signIn(base, "alice@example.com")
            let (status1, second) = try await Self.use(base, first)
            #expect(status1 == 200)
            let rotated = try #require(second)
            #expect(rotated != first)
            #expect(try await Self.use(base, first).0 == 200)
            #expect(try await Self.use(base, first).0 == 200)
            #expect(try await Self.use(base, rotated).0 == 200)
            #expect(try await Self.use(base, rotated).0 == 200)
        }
    }

    @Test("each user keeps the newest 1,000 lenient tokens; an older one is refused")
    func lenientTokensAreBounded() async throws {
        try await H.withEmulator { base in
            let (first, _) = try await H.signIn(base, "alice@example.com")
            var newest = first
            for _ in 0..<1_000 {
                let (status, next) = try await Self.use(base, first)
                #expect(status == 200)
                if let next { newest = next }
                if status != 200 { break }
            }
            // The sign-in's token was the oldest of 1,001.
            #expect(try await Self.use(base, first).0 == 421)
            #expect(try await Self.use(base, newest).0 == 200)
        }
    }

    @Test("with --strict-tokens a token serves one round trip, as Apple's reference says")
    func strictTokensServeOneRoundTrip() async throws {
        try await H.withEmulator(strictTokens: true) { base in
            let (first, _) = try await H.signIn(base, "alice@example.com")
            let (status1, second) = try await Self.use(base, first)
            #expect(status1 == 200)
            let rotated = try #require(second)
            let (status2, _) = try await Self.use(base, first)
            #expect(status2 == 421)
            #expect(try await Self.use(base, rotated).0 == 200)
            #expect(try await Self.use(base, rotated).0 == 421)
        }
    }

    @Test("the http: client keeps working with lenient and strict tokens, requests in parallel")
    func clientWorksWithBothTokenModes() async throws {
        for strict in [false, true] {
            try await H.withEmulator(strictTokens: strict) { base in
                let store = H.store(base)
                let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<6 {
                        group.addTask {
                            let zone = ZoneID(zoneName: "Z\(index)")
                            _ = try await store.modifyZones([ZoneOperation(.create, zone)], in: .private, as: alice)
                            let saved = try await store.modifyRecords(
                                [
                                    .init(
                                        .create, Record(recordName: "r", recordType: "Item", zoneID: zone, fields: [:]))
                                ],
                                in: zone, database: .private, atomic: false, as: alice)
                            #expect(saved[0].error == nil)
                        }
                    }
                    try await group.waitForAll()
                }
                let zones = try await store.listZones(in: .private, as: alice).map(\.zoneID.zoneName)
                #expect(zones.filter { $0.hasPrefix("Z") }.count == 6, "strict: \(strict)")
            }
        }
    }

    // MARK: Server-to-server

    static func keyring(_ key: P256.Signing.PrivateKey, id: String) throws -> ServerKeyring {
        var keyring = ServerKeyring()
        try keyring.add(keyID: id, pem: key.publicKey.pemRepresentation)
        return keyring
    }

    static func signed(
        _ base: String, _ signer: RequestSigner, path: String, body: String, signedBody: String? = nil,
        signedPath: String? = nil, date: Date = Date()
    ) async throws -> H.Answer {
        let headers = try signer.headers(
            date: date, body: Data((signedBody ?? body).utf8), subpath: signedPath ?? path)
        return try await H.raw(base, path, body: body, headers: headers)
    }

    @Test("a server-to-server request signed with a key serve was given reaches the public database")
    func signedRequests() async throws {
        let key = P256.Signing.PrivateKey()
        let signer = try RequestSigner(keyID: "key-1", pem: key.pemRepresentation)
        let stranger = try RequestSigner(keyID: "key-2", pem: P256.Signing.PrivateKey().pemRepresentation)
        let impostor = try RequestSigner(keyID: "key-1", pem: P256.Signing.PrivateKey().pemRepresentation)
        try await H.withEmulator(serverKeys: try Self.keyring(key, id: "key-1")) { base in
            _ = try await Self.publicNote(base)
            let queryPath = H.databasePath("public", "records/query")
            let modifyPath = H.databasePath("public", "records/modify")
            // Good: a read and a write.
            var answer = try await Self.signed(base, signer, path: queryPath, body: Self.query)
            #expect(answer.status == 200, "\(answer.text)")
            #expect((answer.json["records"] as? [[String: Any]])?.count == 1)
            answer = try await Self.signed(base, signer, path: modifyPath, body: Self.create)
            #expect(answer.status == 200, "\(answer.text)")
            #expect((answer.json["records"] as? [[String: Any]])?.first?["recordName"] as? String == "other")

            // Tampered: the body, the date, the path; another key; an unknown key ID.
            var refusals: [(String, H.Answer)] = []
            refusals.append(
                ("body", try await Self.signed(base, signer, path: modifyPath, body: Self.create, signedBody: "{}")))
            refusals.append(
                (
                    "stale date",
                    try await Self.signed(
                        base, signer, path: queryPath, body: Self.query, date: Date().addingTimeInterval(-3600))
                ))
            refusals.append(
                (
                    "path",
                    try await Self.signed(
                        base, signer, path: modifyPath, body: Self.create,
                        signedPath: H.databasePath("public", "records/lookup"))
                ))
            refusals.append(("wrong key", try await Self.signed(base, impostor, path: queryPath, body: Self.query)))
            refusals.append(("unknown key", try await Self.signed(base, stranger, path: queryPath, body: Self.query)))
            // A date header changed after signing.
            var headers = try signer.headers(date: Date(), body: Data(Self.query.utf8), subpath: queryPath)
            headers[1].value = RequestSigner.iso8601(Date().addingTimeInterval(5))
            refusals.append(("date header", try await H.raw(base, queryPath, body: Self.query, headers: headers)))
            // Signed, but for the private database.
            refusals.append(
                (
                    "private",
                    try await Self.signed(
                        base, signer, path: H.databasePath("private", "records/query"), body: Self.query)
                ))
            for (what, refusal) in refusals {
                #expect(refusal.status == 401, "\(what): \(refusal.text)")
                #expect(refusal.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED", "\(what)")
            }
            // Nothing the refused writes sent was saved.
            answer = try await Self.signed(base, signer, path: queryPath, body: Self.query)
            #expect((answer.json["records"] as? [[String: Any]])?.count == 2)
        }
    }

    @Test("the cloudkit: client's RequestSigner signs requests serve accepts")
    func clientSignerEndToEnd() async throws {
        let key = P256.Signing.PrivateKey()
        try await H.withEmulator(serverKeys: try Self.keyring(key, id: "ck-key")) { base in
            _ = try await Self.publicNote(base)
            let endpoint = WebServicesEndpoint(
                kind: .cloudKit, baseURL: base, container: H.container, environment: H.environment, apiToken: nil,
                signer: try RequestSigner(keyID: "ck-key", pem: key.pemRepresentation))
            let store = WebServicesStore(endpoint: endpoint, logger: H.quiet)
            let page = try await store.queryRecords(
                RecordQuery(recordType: "Note"), in: .defaultZone, database: .public, as: defaultOwnerName)
            #expect(page.records.map(\.recordName) == ["note"])
            let saved = try await store.modifyRecords(
                [
                    .init(
                        .create,
                        Record(
                            recordName: "signed", recordType: "Note", zoneID: .defaultZone,
                            fields: ["title": .string("from a server")]))
                ], in: .defaultZone, database: .public, atomic: false, as: defaultOwnerName)
            #expect(saved[0].error == nil, "\(saved)")
            // A client holding another key is refused with AUTHENTICATION_FAILED.
            let other = WebServicesStore(
                endpoint: WebServicesEndpoint(
                    kind: .cloudKit, baseURL: base, container: H.container, environment: H.environment,
                    apiToken: nil,
                    signer: try RequestSigner(keyID: "ck-key", pem: P256.Signing.PrivateKey().pemRepresentation)),
                logger: H.quiet)
            await #expect(throws: ShareError.self) {
                _ = try await other.queryRecords(
                    RecordQuery(recordType: "Note"), in: .defaultZone, database: .public, as: defaultOwnerName)
            }
        }
    }
}

/// The `serve` flags of the authentication rules, through the built binary.
@Suite(.serialized) struct ServeAuthenticationFlagTests {
    @Test("serve --server-key KEY_ID=PEM accepts that key's signatures; a bad --server-key is a clear error")
    func serverKeyFlag() async throws {
        let scratch = try TemporaryDirectory("keys")
        let key = P256.Signing.PrivateKey()
        let publicPEM = try scratch.write("key.pub.pem", key.publicKey.pemRepresentation)
        let server = try await ServeProcess(
            apiToken: "flag-token", extraArguments: ["--server-key", "flag-key=\(publicPEM)"])
        defer { server.stop() }
        let signer = try RequestSigner(keyID: "flag-key", pem: key.pemRepresentation)
        let path = EmulatorHarness.databasePath("public", "zones/list")
        var answer = try await EmulatorHarness.raw(
            server.url, path, body: "{}",
            headers: try signer.headers(date: Date(), body: Data("{}".utf8), subpath: path))
        #expect(answer.status == 200, "\(answer.text)")
        answer = try await EmulatorHarness.raw(
            server.url, path, body: "{}",
            headers: try signer.headers(date: Date(), body: Data("{ }".utf8), subpath: path))
        #expect(answer.status == 401)

        for (argument, message) in [
            ("flag-key=\(scratch.file("missing.pem"))", "cannot read"), ("no-equals", "is not KEY_ID=PATH"),
            ("bad=\(try scratch.write("bad.pem", "not a key"))", "not a P-256"),
        ] {
            let result = try await SharelaneBinary.run([
                "serve", "--port", "0", "--store", "memory:", "--server-key", argument,
            ])
            #expect(result.status != 0)
            #expect(result.stderr.contains(message), "\(argument): \(result.output)")
        }
    }
}
