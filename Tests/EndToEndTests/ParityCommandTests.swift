import Foundation
import SharelaneTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `sharelane record` as a real proxy in front of a real `serve`, and `sharelane replay` of what it wrote:
/// credentials never reach a file or the terminal, a recording replays `same` against a fresh emulator, and
/// a changed answer is reported at its key path.
@Suite("Recording and replaying CloudKit exchanges")
struct ParityCommandTests {
    static let container = "iCloud.test.parity"
    static let apiToken = "parity-secret-api-token-7f3e"

    /// Every credential reaches the upstream and the client, and none reaches the case files, the
    /// command's output, the replay's output or its reports; the recording replays whole, updates, paging,
    /// change feeds and refusals included.
    @Test func aRecordingInFrontOfServeHoldsNoCredentialAndReplaysTheSame() async throws {
        let serve = try await ServeProcess.start(apiToken: Self.apiToken)
        defer { serve.stop() }
        let scratch = try TemporaryDirectory("parity")
        let folder = scratch.file("recording")
        let record = try await RecordProcess(upstream: serve.url, out: folder)
        let client = WireCaller(base: record.url, apiToken: Self.apiToken, container: Self.container)
        try client.exercise()
        let output = record.stop()
        #expect(output.contains("17 exchanges recorded"), "\(output)")

        let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(files.count == 17, "\(files)")
        #expect(files.last == "0017-assets-download.json")
        #expect(files.first == "0001-auth-signin.json")
        let contents = try files.map { try String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }
        let all = contents.joined(separator: "\n")
        #expect(client.secretsSeen.count >= 12)
        for secret in client.secretsSeen + [Self.apiToken] {
            #expect(!all.contains(secret), "a credential reached the case files")
            #expect(!output.contains(secret), "a credential reached record's output")
        }
        #expect(all.contains("<api-token>") && all.contains("<web-auth-token:person-1>"))
        #expect(all.contains("<web-auth-token:person-2>"))

        let junit = scratch.file("replay.xml")
        let replayed = try await SharelaneBinary.run(
            ["replay", folder, "--report", "junit:\(junit)"], environment: ["CLOUDKIT_API_TOKEN": Self.apiToken])
        #expect(replayed.status == 0, "\(replayed.output)")
        #expect(replayed.stdout.hasSuffix("17 exchanges, 17 the same, 0 differ\n"), "\(replayed.output)")
        let report = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(report.contains("tests=\"17\" failures=\"0\""), "\(report)")

        // Against another serve, with the JSON report: the same again, and still no credential.
        let fresh = try await ServeProcess.start(apiToken: "another-secret-api-token-91c2")
        defer { fresh.stop() }
        let json = try await SharelaneBinary.run(
            ["replay", folder, "--store", fresh.url, "--format", "json"],
            environment: ["CLOUDKIT_API_TOKEN": fresh.apiToken])
        #expect(json.status == 0, "\(json.output)")
        #expect(json.stdout.contains("\"differ\" : 0"), "\(json.stdout)")
        for secret in client.secretsSeen + [Self.apiToken, fresh.apiToken] {
            #expect(!replayed.output.contains(secret) && !json.output.contains(secret) && !report.contains(secret))
        }
    }

    /// Against a serve that already holds data of its own, the replay reports the answers that differ by it,
    /// at their key paths, and the rest the same: differences, not noise.
    @Test func aServeSeededDifferentlyReportsTheDifferencesNotNoise() async throws {
        let serve = try await ServeProcess.start(apiToken: Self.apiToken)
        defer { serve.stop() }
        let scratch = try TemporaryDirectory("parity")
        let folder = scratch.file("recording")
        let record = try await RecordProcess(upstream: serve.url, out: folder)
        try WireCaller(base: record.url, apiToken: Self.apiToken, container: Self.container).exercise()
        _ = record.stop()

        // The same person's zone, already holding a trip the recording never made.
        let seeded = try await ServeProcess.start(apiToken: "seeded-secret-api-token-4d1a")
        defer { seeded.stop() }
        let other = WireCaller(base: seeded.url, apiToken: seeded.apiToken, container: Self.container)
        let alice = try other.signIn("alice@example.test")
        _ = try other.call(
            "private/zones/modify", token: alice,
            ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "Trips"]]]]])
        _ = try other.call(
            "private/records/modify", token: alice,
            [
                "zoneID": ["zoneName": "Trips"],
                "operations": [
                    [
                        "operationType": "create",
                        "record": [
                            "recordName": "trip-0", "recordType": "Trip", "fields": ["title": ["value": "Seeded"]],
                        ],
                    ]
                ],
            ])

        let replayed = try await SharelaneBinary.run(
            ["replay", folder, "--store", seeded.url], environment: ["CLOUDKIT_API_TOKEN": seeded.apiToken])
        #expect(replayed.status == 1, "\(replayed.output)")
        let lines = replayed.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.contains { $0.hasPrefix("0001-auth-signin.json") && $0.hasSuffix(": same") }, "\(replayed.stdout)")
        #expect(
            lines.contains { $0.hasSuffix(": only in the replay (\"trip-0\")") },
            "the seeded trip is one difference where it shows: \(replayed.stdout)")
        let differing = lines.filter { $0.hasSuffix("difference") || $0.hasSuffix("differences") }
        #expect(!differing.isEmpty && differing.count < 8, "\(replayed.stdout)")
        #expect(!lines.contains { $0.contains("recordChangeTag") }, "change tags are compared as placeholders")
    }

    /// Server-to-server key IDs and signatures, cookies, and the values of a field `--redact-field` names
    /// never reach the case files; the redacted recording still replays.
    @Test func keysSignaturesAndRedactedFieldsNeverReachTheFiles() async throws {
        let serve = try await ServeProcess.start(apiToken: Self.apiToken)
        defer { serve.stop() }
        let scratch = try TemporaryDirectory("parity")
        let folder = scratch.file("recording")
        let record = try await RecordProcess(upstream: serve.url, out: folder, extra: ["--redact-field", "title"])
        let client = WireCaller(base: record.url, apiToken: Self.apiToken, container: Self.container)
        let alice = try client.signIn("alice@example.test")
        _ = try client.call(
            "private/zones/modify", token: alice,
            ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "Notes"]]]]])
        _ = try client.call(
            "private/records/modify", token: alice,
            [
                "zoneID": ["zoneName": "Notes"],
                "operations": [
                    [
                        "operationType": "create",
                        "record": [
                            "recordName": "n1", "recordType": "Note",
                            "fields": ["title": ["value": "Private diary entry"], "pages": ["value": 3]],
                        ],
                    ]
                ],
            ])
        let signed = try client.send(
            "/database/1/\(Self.container)/development/public/records/query",
            query: [:], ["query": ["recordType": "Note"]],
            headers: [
                "X-Apple-CloudKit-Request-KeyID": "0f6b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
                "X-Apple-CloudKit-Request-ISO8601Date": "2026-01-25T22:15:43Z",
                "X-Apple-CloudKit-Request-SignatureV1": "MEUCIQDsecretsignaturebytesAiEAsecretsignaturebytes==",
                "Cookie": "session=cookie-secret-value",
            ])
        #expect(signed.status >= 400)
        let output = record.stop()
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(files.count == 4, "\(files)")
        let all = try files.map { try String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }.joined()
        for secret in client.secretsSeen + [
            Self.apiToken, "0f6b1c2d3e4f5a6b7c8d9e0f", "secretsignaturebytes", "cookie-secret-value",
            "Private diary entry",
        ] {
            #expect(!all.contains(secret), "\(secret) reached the case files")
            #expect(!output.contains(secret), "\(secret) reached record's output")
        }
        #expect(all.contains("<server-key:1>") && all.contains("<signature>") && all.contains("<redacted>"))
        #expect(all.contains("2026-01-25T22:15:43Z"), "the date is no credential")

        let replayed = try await SharelaneBinary.run(["replay", folder])
        #expect(replayed.output.contains("0002-zones-modify.json  POST"), "\(replayed.output)")
        #expect(
            replayed.output.contains(
                "0003-records-modify.json  POST /database/1/\(Self.container)/development/private/records/modify: same"),
            "\(replayed.output)")
    }

    /// The recordings of `Tests/Parity/` (sharelane's own client and the CloudKit JS sharing app against
    /// `serve`, the reference's answers and published captures of Apple's service) replay the same, against a
    /// fresh in-process emulator and against a `serve` process.
    @Test func theParityCorpusReplaysTheSame() async throws {
        let recordings = try Self.corpus()
        #expect(recordings.count >= 1)
        #expect(recordings.contains { $0.hasSuffix("/reference-records") })
        // The CloudKit JS sharing app's, with its notification long poll answered by a later request.
        #expect(recordings.contains { $0.hasSuffix("/cloudkitjs-sharing") })
        // Answers of Apple's live service that others captured and published, each case naming its source.
        #expect(recordings.contains { $0.hasSuffix("/live-captures") })
        for recording in recordings {
            // A recording written from Apple's reference says where serve answers beyond it, on purpose.
            let allowed = recording + "/allowed.txt"
            let allow = FileManager.default.fileExists(atPath: allowed) ? ["--allow", allowed] : []
            let inProcess = try await SharelaneBinary.run(["replay", recording] + allow)
            #expect(inProcess.status == 0, "\(recording): \(inProcess.output)")
            #expect(inProcess.stdout.contains(" the same, 0 differ"), "\(inProcess.output)")
            let serve = try await ServeProcess.start(apiToken: "corpus-secret-api-token-5b6c")
            defer { serve.stop() }
            let served = try await SharelaneBinary.run(
                ["replay", recording, "--store", serve.url] + allow, environment: ["CLOUDKIT_API_TOKEN": serve.apiToken]
            )
            #expect(served.status == 0, "\(recording): \(served.output)")
        }
    }

    /// A recording edited by hand in three places (a key renamed in one answer, a status changed in another,
    /// a `serverErrorCode` in a third) reports exactly those three differences, at their key paths.
    @Test func aHandEditedRecordingReportsExactlyThoseThreeDifferences() async throws {
        let scratch = try TemporaryDirectory("parity")
        let folder = scratch.file("edited")
        let recording = try #require(try Self.corpus().first { $0.hasSuffix("/notes-permissions") })
        try FileManager.default.copyItem(atPath: recording, toPath: folder)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted().map { "\(folder)/\($0)" }
        func load(_ file: String) throws -> [String: Any] {
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any]
                ?? [:]
        }
        func save(_ object: [String: Any], _ file: String) throws {
            try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
                .write(to: URL(fileURLWithPath: file))
        }
        func records(_ object: [String: Any]) -> [[String: Any]] {
            ((object["response"] as? [String: Any])?["body"] as? [String: Any])?["records"] as? [[String: Any]] ?? []
        }
        // A refusal's code, changed.
        let refused = try #require(
            files.first { file in
                (try? records(load(file)).first?["serverErrorCode"] as? String) == "ACCESS_DENIED"
            })
        var refusal = try load(refused)
        var response = refusal["response"] as? [String: Any] ?? [:]
        var body = response["body"] as? [String: Any] ?? [:]
        var list = records(refusal)
        list[0]["serverErrorCode"] = "NOT_FOUND"
        body["records"] = list
        response["body"] = body
        refusal["response"] = response
        try save(refusal, refused)
        // A key renamed in another answer.
        let renamedFile = try #require(
            files.first { file in
                file != refused && (try? records(load(file)).first?["recordType"] as? String) != nil
            })
        var renamed = try load(renamedFile)
        response = renamed["response"] as? [String: Any] ?? [:]
        body = response["body"] as? [String: Any] ?? [:]
        list = records(renamed)
        list[0]["recordKind"] = list[0].removeValue(forKey: "recordType")
        body["records"] = list
        response["body"] = body
        renamed["response"] = response
        try save(renamed, renamedFile)
        // A status changed in a third.
        let statusFile = try #require(files.last { $0 != refused && $0 != renamedFile })
        var changed = try load(statusFile)
        response = changed["response"] as? [String: Any] ?? [:]
        let status = response["status"] as? Int ?? 0
        response["status"] = status == 200 ? 202 : 200
        changed["response"] = response
        try save(changed, statusFile)

        let replayed = try await SharelaneBinary.run(["replay", folder, "--format", "text"])
        #expect(replayed.status == 1, "\(replayed.output)")
        let differences = replayed.stdout.split(separator: "\n").filter { $0.hasPrefix("  ") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(differences.count == 3, "\(replayed.stdout)")
        #expect(differences.contains { $0.hasPrefix("records[0].recordKind: named recordType in the replay") })
        #expect(
            differences.contains {
                $0 == "records[0].serverErrorCode: \"NOT_FOUND\" in the recording, \"ACCESS_DENIED\" in the replay"
            })
        #expect(
            differences.contains {
                $0 == "status: \(status == 200 ? 202 : 200) in the recording, \(status) in the replay"
            })
        #expect(replayed.stdout.hasSuffix("the same, 3 differ\n"), "\(replayed.stdout)")

        // Deliberate differences fail nothing, and say why.
        let allow = try scratch.write(
            "allowed.txt",
            "# differences known to be deliberate\nstatus: edited on purpose\nrecords[*].recordKind: renamed on purpose\n"
                + "records[0].serverErrorCode: changed on purpose\n")
        let allowed = try await SharelaneBinary.run(["replay", folder, "--allow", allow])
        #expect(allowed.status == 0, "\(allowed.output)")
        #expect(allowed.stdout.contains("(allowed: renamed on purpose)"), "\(allowed.stdout)")
    }

    /// Bad input is said with where and what to do: a damaged case file at its line and column, a folder that
    /// is not a recording, an upstream that is not a URL.
    @Test func badInputSaysWhereAndWhatToDo() async throws {
        let scratch = try TemporaryDirectory("parity")
        try scratch.write("damaged/0001-auth-signin.json", "{\n  \"request\": {,\n}\n")
        let damaged = try await SharelaneBinary.run(["replay", scratch.file("damaged")])
        #expect(damaged.status == 1)
        #expect(damaged.stderr.contains("0001-auth-signin.json:2:15: error: "), "\(damaged.stderr)")
        #expect(damaged.stderr.contains("record it again"), "\(damaged.stderr)")

        let missing = try await SharelaneBinary.run(["replay", scratch.file("nothing-here")])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("is not a recording: there is no such folder; make one with sharelane record"))

        let empty = try await SharelaneBinary.run(["replay", scratch.path])
        #expect(empty.stderr.contains("is not a recording: it holds no case file"), "\(empty.stderr)")

        let upstream = try await SharelaneBinary.run([
            "record", "--upstream", "ftp://example.test", "--out", scratch.file("r"),
        ])
        #expect(upstream.status == 1)
        #expect(upstream.stderr.contains("is not an http:// or https:// URL"), "\(upstream.stderr)")

        let used = try await SharelaneBinary.run(["record", "--out", scratch.file("damaged"), "--port", "0"])
        #expect(used.status == 1)
        #expect(used.stderr.contains("already holds a recording (1 case file)"), "\(used.stderr)")
    }

    /// The recordings of `Tests/Parity/`: every folder in it.
    static func corpus() throws -> [String] {
        let root = BuiltProducts.packageRoot.appendingPathComponent("Tests/Parity").path
        return try FileManager.default.contentsOfDirectory(atPath: root).sorted().map { "\(root)/\($0)" }.filter {
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: $0, isDirectory: &isFolder) && isFolder.boolValue
        }
    }
}

/// A `sharelane record` process on a free loopback port in front of `upstream`.
final class RecordProcess: @unchecked Sendable {
    let url: String
    private let proxy: ListeningProcess
    private let directory: TemporaryDirectory

    init(upstream: String, out: String, extra: [String] = []) async throws {
        directory = try TemporaryDirectory("record")
        proxy = try await ListeningProcess.start(
            ["record", "--upstream", upstream, "--out", out, "--port", "0"] + extra,
            log: directory.url.appendingPathComponent("record.log"), what: "sharelane record")
        url = proxy.url
    }

    /// Stops the proxy as Ctrl-C would and hands back everything it printed.
    func stop() -> String {
        proxy.stopBlocking(signal: SIGINT)
        return proxy.output
    }

    deinit { _ = stop() }
}

/// A client speaking CloudKit Web Services as curl does: JSON bodies as text/plain, tokens in the query.
final class WireCaller: @unchecked Sendable {
    let base: String
    let apiToken: String
    let container: String
    /// Every web auth token the client was handed.
    private(set) var secretsSeen: [String] = []

    init(base: String, apiToken: String, container: String) {
        self.base = base
        self.apiToken = apiToken
        self.container = container
    }

    struct Answer {
        var status: Int
        var json: [String: Any]
        var token: String?
    }

    func signIn(_ email: String) throws -> String {
        let answer = try send(
            "/auth/signin", query: ["ckAPIToken": apiToken],
            ["emailAddress": email, "container": container, "environment": "development"])
        guard let token = answer.json["ckWebAuthToken"] as? String else {
            throw FixtureError(message: "sign-in answered \(answer.status): \(answer.json)")
        }
        return token
    }

    /// `database/1/CONTAINER/development/PATH` as the person of `token` (none: signed out).
    func call(_ path: String, token: String?, _ body: [String: Any]?) throws -> Answer {
        var query = ["ckAPIToken": apiToken]
        if let token { query["ckWebAuthToken"] = token }
        return try send("/database/1/\(container)/development/\(path)", query: query, body)
    }

    func send(
        _ path: String, query: [String: String], _ body: [String: Any]?, headers: [String: String] = [:]
    ) throws -> Answer {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let queryText = query.sorted { $0.key < $1.key }.map {
            "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0.value)"
        }.joined(separator: "&")
        guard let url = URL(string: base + path + "?" + queryText) else {
            throw FixtureError(message: "bad URL \(path)")
        }
        var request = URLRequest(url: url)
        if let body {
            request.httpMethod = "POST"
            request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
        } else {
            request.httpMethod = "GET"
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let semaphore = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: (Data?, URLResponse?, (any Error)?) = (nil, nil, nil)
        URLSession.shared.dataTask(with: request) { data, response, error in
            result = (data, response, error)
            semaphore.signal()
        }.resume()
        semaphore.wait()
        if let error = result.2 { throw error }
        let response = result.1 as? HTTPURLResponse
        let json = result.0.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
        let token = response?.value(forHTTPHeaderField: "X-Apple-CloudKit-Web-Auth-Token")
        for secret in [token, json["ckWebAuthToken"] as? String].compactMap({ $0 }) where !secretsSeen.contains(secret)
        {
            secretsSeen.append(secret)
        }
        return Answer(status: response?.statusCode ?? 0, json: json, token: token)
    }

    /// Seventeen exchanges: two sign-ins, the current user, a zone, records of many field types, an update
    /// with the change tag an answer gave, a stale update refused, a query paged by its continuation marker,
    /// a change feed read again from its sync token, a write without a sign-in refused, and an asset
    /// uploaded, kept and downloaded through the URLs the answers gave.
    func exercise() throws {
        let alice = try signIn("alice@example.test")
        _ = try signIn("bob@example.test")
        _ = try call("public/users/current", token: alice, nil)
        let zone: [String: Any] = ["zoneName": "Trips"]
        _ = try call(
            "private/zones/modify", token: alice,
            ["operations": [["operationType": "create", "zone": ["zoneID": zone]]]])
        let created = try call(
            "private/records/modify", token: alice,
            [
                "zoneID": zone,
                "operations": (1...3).map { number in
                    [
                        "operationType": "create",
                        "record": [
                            "recordName": "trip-\(number)", "recordType": "Trip",
                            "fields": [
                                "title": ["value": "Trip \(number)"], "nights": ["value": number, "type": "INT64"],
                                "cost": ["value": 120.5 * Double(number), "type": "DOUBLE"],
                                "start": ["value": 1_767_225_600_000 + number, "type": "TIMESTAMP"],
                                "tags": ["value": ["sea", "sun"], "type": "STRING_LIST"],
                                "where": ["value": ["latitude": 48.85, "longitude": 2.35], "type": "LOCATION"],
                            ],
                        ],
                    ]
                },
            ])
        let records = created.json["records"] as? [[String: Any]] ?? []
        let tag = records.first?["recordChangeTag"] as? String ?? ""
        let update: (String) -> [String: Any] = { tag in
            [
                "zoneID": zone,
                "operations": [
                    [
                        "operationType": "update",
                        "record": [
                            "recordName": "trip-1", "recordType": "Trip", "recordChangeTag": tag,
                            "fields": ["title": ["value": "Trip one"]],
                        ],
                    ]
                ],
            ]
        }
        _ = try call("private/records/modify", token: alice, update(tag))
        _ = try call("private/records/modify", token: alice, update(tag))
        let query: [String: Any] = ["zoneID": zone, "query": ["recordType": "Trip"], "resultsLimit": 2]
        let first = try call("private/records/query", token: alice, query)
        var next = query
        next["continuationMarker"] = first.json["continuationMarker"] as? String ?? ""
        _ = try call("private/records/query", token: alice, next)
        let feed = try call("private/records/changes", token: alice, ["zoneID": zone])
        _ = try call(
            "private/records/modify", token: alice,
            [
                "zoneID": zone,
                "operations": [
                    [
                        "operationType": "forceUpdate",
                        "record": [
                            "recordName": "trip-2", "recordType": "Trip",
                            "fields": ["nights": ["value": 9, "type": "INT64"]],
                        ],
                    ]
                ],
            ])
        _ = try call(
            "private/records/changes", token: alice,
            ["zoneID": zone, "syncToken": feed.json["syncToken"] as? String ?? ""])
        _ = try call("private/records/modify", token: nil, update(tag))
        // An asset: its upload URL, the bytes, the record that keeps it, and the bytes read back.
        let tickets = try call(
            "private/assets/upload", token: alice,
            ["zoneID": zone, "tokens": [["recordName": "photo-1", "recordType": "Photo", "fieldName": "image"]]])
        let upload = ((tickets.json["tokens"] as? [[String: Any]])?.first?["url"] as? String) ?? ""
        let uploaded = try raw("POST", upload, Data("the bytes of a photo".utf8))
        let asset = (try JSONSerialization.jsonObject(with: uploaded) as? [String: Any])?["singleFile"] ?? [:]
        let saved = try call(
            "private/records/modify", token: alice,
            [
                "zoneID": zone,
                "operations": [
                    [
                        "operationType": "create",
                        "record": [
                            "recordName": "photo-1", "recordType": "Photo",
                            "fields": ["image": ["value": asset, "type": "ASSETID"]],
                        ],
                    ]
                ],
            ])
        let image = (saved.json["records"] as? [[String: Any]])?.first?["fields"] as? [String: Any]
        let download =
            ((image?["image"] as? [String: Any])?["value"] as? [String: Any])?["downloadURL"] as? String ?? ""
        let bytes = try raw("GET", download.replacingOccurrences(of: "${f}", with: "photo.jpg"), nil)
        guard bytes == Data("the bytes of a photo".utf8) else {
            throw FixtureError(message: "the asset read back is not the one uploaded: \(download)")
        }
    }

    /// A request to a URL an answer handed out (an asset's upload or download URL).
    func raw(_ method: String, _ address: String, _ body: Data?) throws -> Data {
        guard let url = URL(string: address) else { throw FixtureError(message: "bad URL \(address)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        let semaphore = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: (Data?, (any Error)?) = (nil, nil)
        URLSession.shared.dataTask(with: request) { data, _, error in
            result = (data, error)
            semaphore.signal()
        }.resume()
        semaphore.wait()
        if let error = result.1 { throw error }
        return result.0 ?? Data()
    }
}
