import Foundation
import SharelaneTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `sharelane replay` of a recording edited to act: a case file is data, never a program. Its requests reach
/// only the store the replay was given, and only as requests of CloudKit Web Services; the rest are refused,
/// one by one, and named in the report.
@Suite("Replaying a hostile recording")
struct HostileReplayTests {
    static let container = "iCloud.test.hostile"

    /// A case that names another port in its Host header, and a later case whose path is the webcourier URL
    /// the first one's answer carried: nothing reaches a listener on that port, from the in-process emulator
    /// or with `--store` and the user's own API token; the report names both refused cases, and replays the
    /// rest.
    @Test func aForgedHostAndACarriedURLReachNoOtherPort() async throws {
        let decoy = try DecoyListener()
        defer { decoy.stop() }
        let scratch = try TemporaryDirectory("hostile-replay")
        let folder = try Self.recording(
            in: scratch,
            [
                Self.tokensCreate(
                    host: "127.0.0.1:\(decoy.port)", carries: Self.databasePath("private", "zones/list")),
                Self.call("GET", Self.databasePath("private", "zones/list")),
                Self.tokensCreate(host: nil, carries: Self.databasePath("private", "subscriptions/list")),
                Self.call("GET", Self.databasePath("private", "subscriptions/list")),
            ])

        let serve = try await ServeProcess.start(apiToken: "hostile-secret-api-token-3e9d")
        defer { serve.stop() }
        for store in [[], ["--store", serve.url]] {
            let replayed = try await SharelaneBinary.run(
                ["replay", folder] + store, environment: ["CLOUDKIT_API_TOKEN": serve.apiToken])
            #expect(decoy.received.isEmpty, "\(store): the decoy port received \(decoy.received)")
            #expect(replayed.status == 1, "\(store): \(replayed.output)")
            let lines = replayed.stdout.split(separator: "\n").map(String.init)
            #expect(
                lines.contains {
                    $0.hasPrefix("0001-tokens-create.json  POST /device/1/")
                        && $0.hasSuffix(
                            ": refused: it sets the host header (127.0.0.1:\(decoy.port)): where a "
                                + "request goes and how is the replay's to decide")
                }, "\(store): \(replayed.stdout)")
            #expect(
                lines.contains {
                    $0.hasPrefix("0004-subscriptions-list.json  GET /database/1/")
                        && $0.contains(
                            ": refused: with the values carried from earlier answers, its path is the URL http://")
                }, "\(store): \(replayed.stdout)")
            // The others are replayed: refusing one case stops nothing.
            for file in ["0002-zones-list.json", "0003-tokens-create.json"] {
                #expect(
                    lines.contains { $0.hasPrefix(file) && !$0.contains("refused") }, "\(store): \(replayed.stdout)")
            }
            #expect(replayed.stdout.hasSuffix(", 2 refused\n"), "\(store): \(replayed.stdout)")
            #expect(!replayed.output.contains(serve.apiToken), "the API token reached the output")
        }
    }

    /// `replay --store` against a serve holding a zone: a recording that resets serve to empty, signs in to its
    /// console and posts its sign-in form has all three refused and named, and the zone is still there.
    @Test func aRecordingCannotEmptyTheServeItIsReplayedAgainst() async throws {
        let serve = try await ServeProcess.start(apiToken: "precious-secret-api-token-8a2f")
        defer { serve.stop() }
        let owner = WireCaller(base: serve.url, apiToken: serve.apiToken, container: Self.container)
        let alice = try owner.signIn("alice@example.test")
        let made = try owner.call(
            "private/zones/modify", token: alice,
            ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "Precious"]]]]])
        #expect(made.status == 200, "\(made.json)")

        let scratch = try TemporaryDirectory("hostile-replay")
        let form = ["content-type": "application/x-www-form-urlencoded"]
        let folder = try Self.recording(
            in: scratch,
            [
                Self.call("POST", "/_sharelane/reset", person: false, body: ["to": "empty"]),
                Self.call("POST", "/console/signin", person: false, headers: form, bodyText: "token=<api-token>"),
                Self.call(
                    "POST", "/auth/signin/form", person: false, headers: form, bodyText: "ticket=t&email=a%40b.c"),
                Self.call("GET", Self.databasePath("private", "zones/list")),
            ])
        let replayed = try await SharelaneBinary.run(
            ["replay", folder, "--store", serve.url], environment: ["CLOUDKIT_API_TOKEN": serve.apiToken])
        #expect(replayed.status == 1, "\(replayed.output)")
        let lines = replayed.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.contains(
                "0001-sharelane-reset.json  POST /_sharelane/reset: refused: /_sharelane/reset is one of sharelane serve's own "
                    + "endpoints, which act on the whole server: a replay sends only CloudKit Web Services requests"),
            "\(replayed.stdout)")
        for (file, path) in [
            ("0002-console-signin.json", "/console/signin"), ("0003-signin-form.json", "/auth/signin/form"),
        ] {
            #expect(
                lines.contains(
                    "\(file)  POST \(path): refused: POST \(path) is not a CloudKit Web Services request: a replay "
                        + "sends only the service's operations, sign-ins, assets' bytes and the notification poll"),
                "\(replayed.stdout)")
        }
        #expect(lines.contains { $0.hasPrefix("0004-zones-list.json") && !$0.contains("refused") })
        #expect(replayed.stdout.hasSuffix(", 3 refused\n"), "\(replayed.stdout)")

        let zones = try owner.call("private/zones/list", token: try owner.signIn("alice@example.test"), nil)
        let names = (zones.json["zones"] as? [[String: Any]] ?? []).compactMap {
            ($0["zoneID"] as? [String: Any])?["zoneName"] as? String
        }
        #expect(names.contains("Precious"), "the zone survives the replay: \(zones.json)")
    }

    // MARK: - Case files

    static func databasePath(_ database: String, _ operation: String) -> String {
        "/database/1/\(container)/development/\(database)/\(operation)"
    }

    /// `tokens/create` as a client sends it, optionally naming `host`, its recorded answer handing out a
    /// `webcourierURL` equal to `carries`, a later case's path.
    static func tokensCreate(host: String?, carries: String) -> [String: Any] {
        var headers = ["content-type": "text/plain"]
        if let host { headers["host"] = host }
        var exchange = call(
            "POST", "/device/1/\(container)/development/tokens/create", headers: headers,
            body: ["apnsEnvironment": "development"])
        exchange["response"] = [
            "status": 200,
            "body": ["apnsEnvironment": "development", "apnsToken": "0a1b2c3d", "webcourierURL": carries],
        ]
        return exchange
    }

    /// A case file's object: the request with the recording's credentials (`<api-token>`, the person's token
    /// when `person`), answered 200 with `{}`.
    static func call(
        _ method: String, _ path: String, person: Bool = true, headers: [String: String] = [:],
        body: [String: Any]? = nil, bodyText: String? = nil
    ) -> [String: Any] {
        var query = [["ckAPIToken", "<api-token>"]]
        if person { query.append(["ckWebAuthToken", "<web-auth-token:person-1>"]) }
        var request: [String: Any] = ["method": method, "path": path, "query": query, "headers": headers]
        if let body { request["body"] = body }
        if let bodyText { request["bodyText"] = bodyText }
        return ["request": request, "response": ["status": 200, "body": [String: Any]()]]
    }

    /// A folder of case files, numbered in order and named by the operation, as `sharelane record` names them.
    static func recording(in scratch: TemporaryDirectory, _ exchanges: [[String: Any]]) throws -> String {
        let folder = scratch.file("recording")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (index, exchange) in exchanges.enumerated() {
            let path = ((exchange["request"] as? [String: Any])?["path"] as? String) ?? ""
            let name = path.split(separator: "/").suffix(2).joined(separator: "-").filter {
                $0.isLetter || $0.isNumber || $0 == "-"
            }
            let data = try JSONSerialization.data(withJSONObject: exchange, options: [.sortedKeys])
            try data.write(to: URL(fileURLWithPath: folder + "/" + String(format: "%04d-", index + 1) + name + ".json"))
        }
        return folder
    }
}

/// A TCP listener on a free loopback port that answers any request `200 {}` and keeps what it was sent: a
/// server a hostile recording would aim a replay at.
final class DecoyListener: @unchecked Sendable {
    let port: Int
    private let descriptor: Int32
    private let lock = NSLock()
    private var requests: [String] = []
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)

    /// What it received, one text a connection.
    var received: [String] { lock.withLock { requests } }

    init() throws {
        let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listening, $0, length) }
        }
        guard listening >= 0, bound == 0, listen(listening, 16) == 0 else {
            throw FixtureError(message: "cannot listen on a loopback port for the decoy: errno \(errno)")
        }
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listening, $0, &length) }
        }
        descriptor = listening
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in serve() }.start()
    }

    /// Accepts until stopped, checking ten times a second.
    private func serve() {
        defer { finished.signal() }
        while !lock.withLock({ stopping }) {
            var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 100) > 0 else { continue }
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { continue }
            var text = Data()
            var buffer = [UInt8](repeating: 0, count: 65536)
            var reading = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            while poll(&reading, 1, 500) > 0 {
                let count = read(connection, &buffer, buffer.count)
                if count <= 0 { break }
                text.append(contentsOf: buffer[0..<count])
                if text.range(of: Data("\r\n\r\n".utf8)) != nil { break }
            }
            lock.withLock { requests.append(String(decoding: text, as: UTF8.self)) }
            let answer =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
            _ = answer.withCString { write(connection, $0, strlen($0)) }
            close(connection)
        }
    }

    func stop() {
        let first = lock.withLock {
            defer { stopping = true }
            return !stopping
        }
        guard first else { return }
        finished.wait()
        close(descriptor)
    }
}
