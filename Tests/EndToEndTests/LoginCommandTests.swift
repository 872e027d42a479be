import Foundation
import SharelaneTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `sharelane login` and `logout` through the built binary against a real `sharelane serve`: the sign-in
/// redirect of `cloudkit:` (the emulator standing in for Apple through `CLOUDKIT_BASE_URL`) and the direct
/// sign-in of `http:`, then commands in a row with no token in the environment.
@Suite(.serialized) struct LoginCommandTests {
    static let container = "iCloud.com.example.Login"

    /// The environment of a command with no credential at all: the token file in `config`.
    static func bare(_ config: TemporaryDirectory, baseURL: String? = nil) -> [String: String] {
        var environment = [
            "XDG_CONFIG_HOME": config.path, "CLOUDKIT_API_TOKEN": "", "CLOUDKIT_WEB_AUTH_TOKEN": "",
            "CLOUDKIT_KEY_ID": "", "CLOUDKIT_PRIVATE_KEY_FILE": "", "SHARELANE_TOKEN_FILE": "", "NO_COLOR": "1",
        ]
        if let baseURL { environment["CLOUDKIT_BASE_URL"] = baseURL }
        return environment
    }

    /// What a browser does on the sign-in page: GET it, then submit the form (following the redirect to the
    /// callback).
    static func signInAsBrowser(_ url: String, email: String) throws -> Int {
        let components = try #require(URLComponents(string: url))
        let items = components.queryItems ?? []
        let ticket = try #require(items.first { $0.name == "ticket" }?.value)
        let callback = try #require(items.first { $0.name == "callback" }?.value)
        let page = try fetch(URLRequest(url: try #require(URL(string: url))))
        #expect(page.status == 200)
        #expect(page.text.contains("emailAddress"))
        var base = components
        base.path = "/auth/signin/form"
        base.query = nil
        var request = URLRequest(url: try #require(base.url))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        func encoded(_ text: String) -> String {
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
        }
        request.httpBody = Data(
            "ticket=\(encoded(ticket))&callback=\(encoded(callback))&emailAddress=\(encoded(email))".utf8)
        // URLSession follows the 303 to the callback, as a browser does.
        let done = try fetch(request)
        #expect(done.text.contains("Signed in"), "\(done.text)")
        return done.status
    }

    static func fetch(_ request: URLRequest) throws -> (status: Int, text: String) {
        let semaphore = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: (Int, String, (any Error)?) = (0, "", nil)
        URLSession.shared.dataTask(with: request) { data, response, error in
            result = (
                (response as? HTTPURLResponse)?.statusCode ?? 0, data.map { String(decoding: $0, as: UTF8.self) } ?? "",
                error
            )
            semaphore.signal()
        }.resume()
        semaphore.wait()
        if let error = result.2 { throw error }
        return (result.0, result.1)
    }

    /// Waits for `sharelane login` to print the URL to open, and answers it.
    static func signInURL(inOutputAt path: String, of process: ProcessExit) throws -> String {
        func url() -> String? {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            return text.range(of: #"http://127\.0\.0\.1:[0-9]+/auth/signin\?\S+"#, options: .regularExpression)
                .map { String(text[$0]) }
        }
        guard process.waitWhileRunningBlocking(within: TestDeadlines.serverStart, until: { url() != nil }),
            let found = url()
        else {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            throw FixtureError(message: "sharelane login printed no sign-in URL:\n\(text)")
        }
        return found
    }

    @Test("cloudkit: login through the sign-in redirect, two commands in a row with no token, then logout")
    func cloudKitLoginThenTwoCommands() async throws {
        // Strict tokens: the second command works only if the first kept the newest token.
        let server = try await ServeProcess(apiToken: "login-api-token", extraArguments: ["--strict-tokens"])
        defer { server.stop() }
        let config = try TemporaryDirectory("config")
        let store = "cloudkit:\(Self.container)"

        // No container anywhere: a clear error, no silent default.
        var environment = Self.bare(config, baseURL: server.url)
        environment["CLOUDKIT_API_TOKEN"] = server.apiToken
        let noContainer = try await SharelaneBinary.run(
            ["login", "--store", "cloudkit:"], in: config.url, environment: environment)
        #expect(noContainer.status != 0)
        #expect(noContainer.stderr.contains("names no CloudKit container"), "\(noContainer.output)")

        // login, as a user at a terminal: the browser part is played by this test.
        let scratch = try TemporaryDirectory("login")
        let outPath = scratch.file("stdout")
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        let login = Process()
        login.executableURL = SharelaneBinary.executable
        login.arguments = ["login", "--store", store, "--wait", "60s"]
        login.currentDirectoryURL = config.url
        login.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        login.standardOutput = out
        login.standardError = out
        login.standardInput = FileHandle.nullDevice
        let loginExit = ProcessExit(login)
        try login.run()
        defer { SharelaneBinary.stopBlocking(login, loginExit) }
        let url = try Self.signInURL(inOutputAt: outPath, of: loginExit)
        #expect(url.hasPrefix(server.url + "/auth/signin?ticket="))
        #expect(try Self.signInAsBrowser(url, email: "mei@example.com") == 200)
        _ = loginExit.statusBlocking(within: TestDeadlines.processEnd)
        let loginOutput = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        #expect(login.terminationStatus == 0, "\(loginOutput)")
        #expect(loginOutput.contains("Signed in to cloudkit:\(Self.container)/development as mei@example.com"))

        // The token file: owner-only, holding the token, which no output shows.
        let tokenFile = config.file("sharelane/tokens.json")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: tokenFile)[.posixPermissions] as? Int)
        #expect(mode & 0o777 == 0o600)
        let saved = try String(contentsOfFile: tokenFile, encoding: .utf8)
        let firstToken = try #require(Self.webAuthToken(in: saved))
        #expect(!loginOutput.contains(firstToken))
        #expect(!loginOutput.contains(server.apiToken))

        // Two commands in a row, with no token in the environment.
        let bare = Self.bare(config, baseURL: server.url)
        let first = try await SharelaneBinary.run(
            ["show", "--store", store, "--as", "mei@example.com"], in: config.url, environment: bare)
        #expect(first.status == 0, "\(first.output)")
        #expect(first.stdout.contains("mei@example.com"), "\(first.output)")
        let rotated = try #require(Self.webAuthToken(in: try String(contentsOfFile: tokenFile, encoding: .utf8)))
        #expect(rotated != firstToken, "the command kept the newest token")
        let second = try await SharelaneBinary.run(
            ["show", "--store", store, "--as", "mei@example.com", "--database", "private"], in: config.url,
            environment: bare)
        #expect(second.status == 0, "\(second.output)")
        for output in [first.output, second.output] {
            #expect(!output.contains(firstToken))
            #expect(!output.contains(rotated))
            #expect(!output.contains(server.apiToken))
        }

        // The same sign-in serves every command alike: plan, apply, query, access, graph and a lane.
        _ = try config.write(
            "notes.yaml",
            """
            sharelane: 1
            name: notes
            container: \(Self.container)
            users: { mei: { email: mei@example.com } }
            owner: mei
            zones:
              Notes:
                records:
                  first: { type: Note, fields: { title: First } }
            lanes:
              check:
                - expect: { as: mei, zone: Notes, records: 1 }
            """)
        for arguments in [
            ["plan", "notes.yaml", "--store", store], ["apply", "notes.yaml", "--store", store, "--yes"],
            ["plan", "notes.yaml", "--store", store, "--detailed-exitcode"],
            ["query", "notes.yaml", "--store", store, "--zone", "Notes", "--type", "Note"],
            ["access", "notes.yaml", "--store", store], ["graph", "notes.yaml", "--store", store],
            ["run", "check", "notes.yaml", "--store", store],
        ] {
            let result = try await SharelaneBinary.run(arguments, in: config.url, environment: bare)
            #expect(result.status == 0, "\(arguments): \(result.output)")
            #expect(!result.output.contains("AUTHENTICATION"), "\(arguments): \(result.output)")
            #expect(!result.output.contains(server.apiToken))
            if arguments.first == "query" { #expect(result.stdout.contains("First"), "\(result.output)") }
        }

        // logout removes it; then the store has no credentials.
        let logout = try await SharelaneBinary.run(["logout", "--store", store], in: config.url, environment: bare)
        #expect(logout.status == 0, "\(logout.output)")
        #expect(!FileManager.default.fileExists(atPath: tokenFile))
        let after = try await SharelaneBinary.run(
            ["show", "--store", store, "--as", "mei@example.com"], in: config.url, environment: bare)
        #expect(after.status != 0)
        #expect(after.stderr.contains("CLOUDKIT_API_TOKEN"), "\(after.output)")
    }

    @Test("http: login signs in directly; later commands need no token in the environment")
    func httpLoginThenCommands() async throws {
        let server = try await ServeProcess(apiToken: "login-http-token")
        defer { server.stop() }
        let config = try TemporaryDirectory("config")
        var environment = Self.bare(config)
        environment["CLOUDKIT_API_TOKEN"] = server.apiToken
        let login = try await SharelaneBinary.run(
            ["login", "--store", server.url, "--email", "alice@example.com"], in: config.url, environment: environment)
        #expect(login.status == 0, "\(login.output)")
        #expect(!login.output.contains(server.apiToken))
        let tokenFile = config.file("sharelane/tokens.json")
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: tokenFile)[.posixPermissions] as? Int)
        #expect(mode & 0o777 == 0o600)
        let bare = Self.bare(config)
        for database in ["private", "public"] {
            let show = try await SharelaneBinary.run(
                ["show", "--store", server.url, "--as", "alice@example.com", "--database", database], in: config.url,
                environment: bare)
            #expect(show.status == 0, "\(show.output)")
            #expect(!show.output.contains(server.apiToken))
        }
        let logout = try await SharelaneBinary.run(
            ["logout", "--store", server.url, "--email", "alice@example.com"], in: config.url, environment: bare)
        #expect(logout.status == 0, "\(logout.output)")
        #expect(!FileManager.default.fileExists(atPath: tokenFile))
        let after = try await SharelaneBinary.run(
            ["show", "--store", server.url, "--as", "alice@example.com"], in: config.url, environment: bare)
        #expect(after.status != 0)
        #expect(after.stderr.contains("API token"), "\(after.output)")
    }

    static func webAuthToken(in json: String) -> String? {
        guard let data = json.data(using: .utf8),
            let entries = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]]
        else { return nil }
        return entries.first?["webAuthToken"] as? String
    }
}
