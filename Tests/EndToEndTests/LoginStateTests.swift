import Foundation
import SharelaneTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// `sharelane login`'s callback takes only the answer that carries the random state of the URL it printed:
/// another program on the machine that sends its own token to the waiting callback is refused, and the real
/// sign-in still completes. Through the built binary, against a real `sharelane serve` standing in for Apple.
@Suite(.serialized) struct LoginStateTests {
    static let container = "iCloud.com.example.LoginState"

    /// A port nobody listens on now, for `--callback-port`.
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw FixtureError(message: "no socket") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(socket, generic, length) == 0 && getsockname(socket, generic, &length) == 0
            }
        }
        guard bound else { throw FixtureError(message: "cannot bind a loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A real web auth token of another user of the same server: what an attacker would send.
    static func othersToken(_ server: ServeProcess, email: String) async throws -> String {
        let config = try TemporaryDirectory("mallory")
        var environment = LoginCommandTests.bare(config)
        environment["CLOUDKIT_API_TOKEN"] = server.apiToken
        let login = try await SharelaneBinary.run(
            ["login", "--store", server.url, "--email", email], in: config.url, environment: environment)
        #expect(login.status == 0, "\(login.output)")
        let saved = try String(contentsOfFile: config.file("sharelane/tokens.json"), encoding: .utf8)
        return try #require(LoginCommandTests.webAuthToken(in: saved))
    }

    static func get(_ url: String) throws -> (status: Int, text: String) {
        try LoginCommandTests.fetch(URLRequest(url: try #require(URL(string: url))))
    }

    static func encoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    @Test("a token sent to the waiting callback without the sign-in's state, or with another, is refused")
    func forgedCallbacksAreRefused() async throws {
        let server = try await ServeProcess(apiToken: "login-state-api-token")
        defer { server.stop() }
        let forged = try await Self.othersToken(server, email: "mallory@evil.example")
        let config = try TemporaryDirectory("config")
        var environment = LoginCommandTests.bare(config, baseURL: server.url)
        environment["CLOUDKIT_API_TOKEN"] = server.apiToken
        let port = try Self.freePort()

        let scratch = try TemporaryDirectory("login-state")
        let outPath = scratch.file("output")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let login = Process()
        login.executableURL = SharelaneBinary.executable
        login.arguments = [
            "login", "--store", "cloudkit:\(Self.container)", "--callback-port", "\(port)", "--wait", "60s",
        ]
        login.currentDirectoryURL = config.url
        login.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        login.standardOutput = out
        login.standardError = out
        login.standardInput = FileHandle.nullDevice
        let loginExit = ProcessExit(login)
        try login.run()
        defer { SharelaneBinary.stopBlocking(login, loginExit) }
        let url = try LoginCommandTests.signInURL(inOutputAt: outPath, of: loginExit)

        // Another program knows the port (it is fixed in CloudKit Console) but not the state.
        let callback = "http://127.0.0.1:\(port)/callback"
        let token = "ckWebAuthToken=\(Self.encoded(forged))"
        for attempt in [
            "\(callback)?\(token)", "\(callback)?state=&\(token)", "\(callback)?state=guessed&\(token)",
            "\(callback)?state=\(String(repeating: "A", count: 43))&\(token)",
        ] {
            let answer = try Self.get(attempt)
            #expect(answer.status == 400, "\(attempt): \(answer.status) \(answer.text)")
            #expect(!loginExit.hasEnded, "login took a forged answer: \(attempt)")
        }

        // The sign-in the user started still completes, as the user who signed in.
        #expect(try LoginCommandTests.signInAsBrowser(url, email: "mei@example.com") == 200)
        _ = loginExit.statusBlocking(within: TestDeadlines.processEnd)
        let output = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        #expect(login.terminationStatus == 0, "\(output)")
        #expect(output.contains("as mei@example.com"), "\(output)")
        #expect(!output.contains("mallory"), "\(output)")
        #expect(output.contains("Refused an answer without this sign-in's state"), "\(output)")
        #expect(!output.contains(forged))
        let saved = try String(contentsOfFile: config.file("sharelane/tokens.json"), encoding: .utf8)
        #expect(!saved.contains("mallory"))
        #expect(!saved.contains(forged))
    }

    @Test("the URL login prints carries a random state that its callback gives back")
    func theSignInURLCarriesAFreshState() async throws {
        let server = try await ServeProcess(apiToken: "login-state-api-token")
        defer { server.stop() }
        var states: [String] = []
        for _ in 0..<2 {
            let config = try TemporaryDirectory("config")
            var environment = LoginCommandTests.bare(config, baseURL: server.url)
            environment["CLOUDKIT_API_TOKEN"] = server.apiToken
            let outPath = config.file("output")
            _ = FileManager.default.createFile(atPath: outPath, contents: nil)
            let login = Process()
            login.executableURL = SharelaneBinary.executable
            login.arguments = ["login", "--store", "cloudkit:\(Self.container)", "--wait", "60s"]
            login.currentDirectoryURL = config.url
            login.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
            login.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
            login.standardError = login.standardOutput
            login.standardInput = FileHandle.nullDevice
            let loginExit = ProcessExit(login)
            try login.run()
            defer { SharelaneBinary.stopBlocking(login, loginExit) }
            let url = try LoginCommandTests.signInURL(inOutputAt: outPath, of: loginExit)
            let callback = try #require(
                URLComponents(string: url)?.queryItems?.first { $0.name == "callback" }?.value)
            let state = try #require(URLComponents(string: callback)?.queryItems?.first { $0.name == "state" }?.value)
            // 32 random bytes, base64url.
            #expect(state.count == 43, "\(state)")
            states.append(state)
            #expect(try LoginCommandTests.signInAsBrowser(url, email: "mei@example.com") == 200)
            _ = loginExit.statusBlocking(within: TestDeadlines.processEnd)
            #expect(login.terminationStatus == 0)
        }
        #expect(states[0] != states[1])
    }
}
