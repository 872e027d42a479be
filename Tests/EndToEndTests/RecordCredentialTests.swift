import Foundation
import SharelaneTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sharelane record` in front of a real `serve`, driven as a browser and `sharelane login` drive it: every
/// token of every sign-in path, and the API token, stay out of the recording's files, which only their owner
/// can read; a redirect reaches the client as it is, never followed by the proxy; and an address other than
/// loopback is said.
@Suite("record keeps credentials out and proxies one service")
struct RecordCredentialTests {
    static let container = "iCloud.test.record-credentials"
    static let apiToken = "record-credential-api-token-5d21"

    /// Every sign-in path through the proxy: the sign-in page and its form showing the token to paste,
    /// CloudKit JS's popup (`{"ckSession":…}`), the form's redirect to a callback that then comes back through
    /// the proxy, the console's sign-in form (the API token itself), its session cookie and sign-out check,
    /// and `sharelane login`'s browser sign-in. The tokens are used again afterwards, so files written before
    /// a token turns up in a query must be clean already. No file holds any of them; files are 0600 in a
    /// 0700 folder.
    @Test func everySignInPathLeavesNoCredentialInTheRecording() async throws {
        let serve = try await ServeProcess(apiToken: Self.apiToken)
        defer { serve.stop() }
        let scratch = try TemporaryDirectory("record-credentials")
        let folder = scratch.file("recording")
        let record = try await RecordProcess(upstream: serve.url, out: folder)
        let browser = UnfollowingBrowser()
        var secrets: [String] = [Self.apiToken]
        let signedOut = "/database/1/\(Self.container)/development/public/users/current?ckAPIToken=\(Self.apiToken)"

        // The sign-in page, and its form answering with the token to paste.
        let ticket = try Self.ticket(browser.send(record.url + signedOut))
        let page = try browser.send(record.url + "/auth/signin?ticket=\(ticket)")
        #expect(page.status == 200, "\(page.text)")
        let pasted = try browser.send(
            record.url + "/auth/signin/form",
            form: Self.hiddenInputs(page.text) + [("emailAddress", "paste@example.test")])
        let pastedToken = try #require(Self.between("<code>", "</code>", in: pasted.text), "\(pasted.text)")
        secrets.append(pastedToken)

        // CloudKit JS's popup: the refused request of an allowed page, the page it opens, the message it posts.
        let origin = "http://127.0.0.1:5173"
        let popupTicket = try Self.ticket(browser.send(record.url + signedOut, headers: ["Origin": origin]))
        let popup = try browser.send(
            record.url + "/auth/signin?ticket=\(popupTicket)", headers: ["Referer": origin + "/"])
        let posted = try browser.send(
            record.url + "/auth/signin/form",
            form: Self.hiddenInputs(popup.text) + [("emailAddress", "popup@example.test")])
        let sessionToken = try #require(Self.between("{\"ckSession\":\"", "\"", in: posted.text), "\(posted.text)")
        secrets.append(sessionToken)

        // The form's redirect to a callback, followed by the client (as a browser does) back through the proxy.
        let callbackTicket = try Self.ticket(browser.send(record.url + signedOut))
        let redirected = try browser.send(
            record.url + "/auth/signin/form",
            form: [
                ("ticket", callbackTicket), ("callback", record.url + "/callback"),
                ("emailAddress", "callback@example.test"),
            ])
        #expect(redirected.status == 303, "\(redirected.status) \(redirected.text)")
        let location = try #require(redirected.headers["location"])
        let callbackToken = try #require(
            URLComponents(string: location)?.queryItems?.first { $0.name == "ckWebAuthToken" }?.value, "\(location)")
        secrets.append(callbackToken)
        _ = try browser.send(location)

        // The console: its sign-in form posts the API token, a session cookie stands for it, a page holds the
        // sign-out check, and a page opened with the token in its address posts it on.
        let console = try browser.send(record.url + "/console/signin")
        #expect(console.status == 200)
        let signedIn = try browser.send(
            record.url + "/console/signin", form: [("next", "/"), ("token", Self.apiToken)])
        #expect(signedIn.status == 303, "\(signedIn.status) \(signedIn.text)")
        let cookie = try #require(signedIn.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
        secrets.append(String(cookie.drop { $0 != "=" }.dropFirst()))
        let overview = try browser.send(record.url + "/", headers: ["Cookie": cookie])
        #expect(overview.status == 200, "\(overview.text)")
        let check = try #require(Self.hiddenInputs(overview.text).first { $0.0 == "csrf" }?.1, "\(overview.text)")
        secrets.append(check)
        let tokenInAddress = try browser.send(record.url + "/access?ckAPIToken=\(Self.apiToken)")
        #expect(tokenInAddress.text.contains(Self.apiToken), "the page posts the token on")
        _ = try browser.send(record.url + "/console/signout", form: [("csrf", check)], headers: ["Cookie": cookie])

        // The tokens used again, after the files that first showed them were written.
        for (parameter, token) in [
            ("ckWebAuthToken", pastedToken), ("ckSession", sessionToken), ("ckWebAuthToken", callbackToken),
        ] {
            let answer = try browser.send(record.url + signedOut + "&\(parameter)=\(Self.encoded(token))")
            #expect(answer.status == 200, "\(answer.text)")
            secrets += answer.headers["x-apple-cloudkit-web-auth-token"].map { [$0] } ?? []
        }

        // sharelane login's browser sign-in, its Apple stand-in reached through the proxy.
        let config = try TemporaryDirectory("record-login")
        let loginLog = scratch.file("login.log")
        _ = FileManager.default.createFile(atPath: loginLog, contents: nil)
        let login = Process()
        login.executableURL = SharelaneBinary.executable
        login.arguments = ["login", "--store", "cloudkit:\(Self.container)", "--wait", "60s"]
        login.environment = ProcessInfo.processInfo.environment.merging([
            "XDG_CONFIG_HOME": config.path, "CLOUDKIT_API_TOKEN": Self.apiToken, "CLOUDKIT_BASE_URL": record.url,
            "CLOUDKIT_WEB_AUTH_TOKEN": "", "CLOUDKIT_KEY_ID": "", "CLOUDKIT_PRIVATE_KEY_FILE": "",
            "SHARELANE_TOKEN_FILE": "", "NO_COLOR": "1",
        ]) { $1 }
        let loginOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: loginLog))
        login.standardOutput = loginOutput
        login.standardError = loginOutput
        login.standardInput = FileHandle.nullDevice
        let loginExit = ProcessExit(login)
        try login.run()
        defer { SharelaneBinary.stopBlocking(login, loginExit) }
        let signInURL = try Self.printedSignInURL(loginLog, of: loginExit)
        // The redirectURL names the emulator's own address; the browser is sent through the proxy instead.
        let throughProxy = record.url + signInURL.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" }
        let loginPage = try browser.send(throughProxy)
        #expect(loginPage.status == 200, "\(loginPage.text)")
        let loginForm = try browser.send(
            record.url + "/auth/signin/form",
            form: Self.hiddenInputs(loginPage.text) + [("emailAddress", "login@example.test")])
        #expect(loginForm.status == 303, "\(loginForm.status) \(loginForm.text)")
        let loginCallback = try #require(loginForm.headers["location"])
        secrets +=
            URLComponents(string: loginCallback)?.queryItems?.filter { $0.name == "ckWebAuthToken" }
            .compactMap(\.value) ?? []
        _ = try browser.send(loginCallback)
        _ = loginExit.statusBlocking(within: TestDeadlines.processEnd)
        let loginText = (try? String(contentsOfFile: loginLog, encoding: .utf8)) ?? ""
        #expect(login.terminationStatus == 0, "\(loginText)")
        let kept = try String(contentsOfFile: config.file("sharelane/tokens.json"), encoding: .utf8)
        let entries = try JSONSerialization.jsonObject(with: Data(kept.utf8)) as? [[String: Any]]
        secrets.append(try #require(entries?.first?["webAuthToken"] as? String, "\(kept)"))

        let output = record.stop()
        #expect(secrets.count >= 10, "\(secrets)")
        #expect(Set(secrets).count == secrets.count, "every secret is a different one")

        // Every file of the folder, hidden ones included, read as bytes.
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(names.count >= 20, "\(names)")
        var all = ""
        for name in names {
            let file = folder + "/" + name
            all += String(decoding: try Data(contentsOf: URL(fileURLWithPath: file)), as: UTF8.self) + "\n"
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
            #expect(mode & 0o777 == 0o600, "\(name) is \(String(mode & 0o777, radix: 8)), not 600")
        }
        let folderMode = try #require(
            try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int)
        #expect(folderMode & 0o777 == 0o700, "the folder is \(String(folderMode & 0o777, radix: 8)), not 700")
        for secret in secrets {
            for form in Self.forms(of: secret) {
                #expect(!all.contains(form), "a credential (\(secret.prefix(6))…) reached the recording as \(form)")
                #expect(!output.contains(form), "a credential reached record's output")
            }
        }
        #expect(all.contains("<api-token>") && all.contains("<web-auth-token:person-"))
    }

    /// A redirect of the upstream to another port on this machine reaches the client as it is: the proxy
    /// never goes there itself (with the token the redirect carries), and a listener there hears nothing.
    @Test func aRedirectReachesTheClientUnfollowed() async throws {
        let decoy = try RedirectDecoy()
        defer { decoy.stop() }
        let serve = try await ServeProcess(apiToken: Self.apiToken)
        defer { serve.stop() }
        let scratch = try TemporaryDirectory("record-redirect")
        let record = try await RecordProcess(upstream: serve.url, out: scratch.file("recording"))
        defer { _ = record.stop() }
        let browser = UnfollowingBrowser()
        let ticket = try Self.ticket(
            browser.send(
                record.url + "/database/1/\(Self.container)/development/public/users/current?ckAPIToken="
                    + Self.apiToken))
        let callback = "http://127.0.0.1:\(decoy.port)/landing"
        let answer = try browser.send(
            record.url + "/auth/signin/form",
            form: [("ticket", ticket), ("callback", callback), ("emailAddress", "decoy@example.test")])
        #expect(answer.status == 303, "the client got \(answer.status): \(answer.text)")
        #expect(answer.headers["location"]?.hasPrefix(callback + "?ckWebAuthToken=") == true, "\(answer.headers)")
        #expect(!answer.text.contains("decoy"))
        #expect(decoy.connections == 0, "the proxy went to the redirect's address itself")
    }

    /// `--host 0.0.0.0` listens on every interface and says so, with the address it bound; by default only
    /// loopback, as the banner says.
    @Test func anAddressBeyondLoopbackIsSaid() async throws {
        let serve = try await ServeProcess(apiToken: Self.apiToken)
        defer { serve.stop() }
        let scratch = try TemporaryDirectory("record-host")
        let process = try StartedProcess(
            [
                "record", "--upstream", serve.url, "--out", scratch.file("recording"), "--port", "0", "--host",
                "0.0.0.0",
            ], log: scratch.url.appendingPathComponent("record.log"))
        defer { process.stopBlocking(signal: SIGINT) }
        _ = await process.waitUntil(within: TestDeadlines.serverStart) { process.output.contains("(Ctrl-C stops)") }
        let text = process.output
        #expect(text.contains("listening on every interface"), "\(text)")
        let bound = try #require(
            text.range(of: #"http://0\.0\.0\.0:[0-9]+"#, options: .regularExpression).map { String(text[$0]) },
            "the banner names the address it bound: \(text)")
        // It does listen there: through loopback, a request reaches the upstream.
        let port = bound.split(separator: ":").last.map(String.init) ?? ""
        #expect(!text.contains("http://127.0.0.1:\(port)"), "the banner names the address it bound: \(text)")
        let answer = try UnfollowingBrowser().send(
            "http://127.0.0.1:\(port)/database/1/\(Self.container)/development/public/users/current?ckAPIToken=\(Self.apiToken)"
        )
        #expect(answer.status == 421, "\(answer.status) \(answer.text)")

        let loopback = try await RecordProcess(upstream: serve.url, out: scratch.file("loopback"))
        let said = loopback.stop()
        #expect(!said.contains("every interface") && !said.contains("not loopback"), "\(said)")
    }

    /// An existing empty folder is made private (0700) before anything is written to it; one that holds other
    /// files and that other users can open is refused, and left as it was.
    @Test func anExistingFolderIsMadePrivateOrRefused() async throws {
        let serve = try await ServeProcess(apiToken: Self.apiToken)
        defer { serve.stop() }
        let scratch = try TemporaryDirectory("record-folder")
        let empty = scratch.file("empty")
        try FileManager.default.createDirectory(
            atPath: empty, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        let record = try await RecordProcess(upstream: serve.url, out: empty)
        _ = try UnfollowingBrowser().send(record.url + "/auth/signin?ticket=none")
        _ = record.stop()
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: empty)[.posixPermissions] as? Int)
        #expect(mode & 0o777 == 0o700, "the folder is \(String(mode & 0o777, radix: 8)), not 700")

        let shared = try scratch.write("shared/notes.txt", "kept\n")
        let folder = (shared as NSString).deletingLastPathComponent
        #expect(chmod(folder, 0o755) == 0)
        let process = try StartedProcess(
            ["record", "--upstream", serve.url, "--out", folder, "--port", "0"],
            log: scratch.url.appendingPathComponent("refused.log"))
        // Until it ends, or says it listens (which it must not).
        _ = await process.waitUntil(within: TestDeadlines.processEnd) { process.output.contains("(Ctrl-C stops)") }
        if !process.hasEnded {
            process.stopBlocking(signal: SIGINT)
            Issue.record("record listened instead of refusing a folder others can open")
        }
        let said = process.output
        #expect(process.process.terminationStatus == 1, "\(said)")
        #expect(said.contains("holds other files and other users can open it (mode 0755)"), "\(said)")
        #expect(said.contains("chmod 700"), "\(said)")
        let after = try #require(try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int)
        #expect(after & 0o777 == 0o755, "a refused folder is left as it was")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["notes.txt"])
    }

    // MARK: - Helpers

    /// The sign-in ticket of a refusal's `redirectURL`.
    /// serve names its own address in the webcourier URL it hands out; through the proxy that URL names the
    /// proxy, so the client's long poll comes back through it and is recorded as the rest of the exchange.
    @Test func serveURLsLeadBackThroughTheProxy() async throws {
        let serve = try await ServeProcess(apiToken: Self.apiToken)
        defer { serve.stop() }
        let scratch = try TemporaryDirectory("record-webcourier")
        let folder = scratch.file("recording")
        let record = try await RecordProcess(upstream: serve.url, out: folder)
        let browser = UnfollowingBrowser()
        let signedOut = "/database/1/\(Self.container)/development/public/users/current?ckAPIToken=\(Self.apiToken)"
        let ticket = try Self.ticket(browser.send(record.url + signedOut))
        let page = try browser.send(record.url + "/auth/signin?ticket=\(ticket)")
        let pasted = try browser.send(
            record.url + "/auth/signin/form",
            form: Self.hiddenInputs(page.text) + [("emailAddress", "poll@example.test")])
        let token = try #require(Self.between("<code>", "</code>", in: pasted.text), "\(pasted.text)")
        let channel = try browser.send(
            record.url + "/device/1/\(Self.container)/development/tokens/create?ckAPIToken=\(Self.apiToken)"
                + "&ckWebAuthToken=\(Self.encoded(token))",
            json: #"{"apnsEnvironment":"development"}"#)
        #expect(channel.status == 200, "\(channel.text)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(channel.text.utf8)) as? [String: Any], "\(channel.text)")
        let webcourier = try #require(json["webcourierURL"] as? String, "\(channel.text)")
        #expect(webcourier.hasPrefix(record.url + "/"), "\(webcourier) names serve, not the proxy")
        let poll = try browser.send(webcourier + "&wait=0")
        #expect(poll.status < 400, "\(poll.status) \(poll.text)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(files.contains { $0.contains("webcourier") }, "the long poll is recorded: \(files.sorted())")
    }

    static func ticket(_ answer: UnfollowingBrowser.Answer) throws -> String {
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(answer.text.utf8)) as? [String: Any], "\(answer.text)")
        let redirect = try #require(json["redirectURL"] as? String, "\(answer.text)")
        return try #require(URLComponents(string: redirect)?.queryItems?.first { $0.name == "ticket" }?.value)
    }

    /// The hidden inputs of a page's form, as a browser posts them back.
    static func hiddenInputs(_ html: String) -> [(String, String)] {
        html.components(separatedBy: "<input type=\"hidden\" ").dropFirst().compactMap { tag in
            guard let name = between("name=\"", "\"", in: tag), let value = between("value=\"", "\"", in: tag) else {
                return nil
            }
            return (name, value.replacingOccurrences(of: "&amp;", with: "&"))
        }
    }

    static func between(_ start: String, _ end: String, in text: String) -> String? {
        guard let open = text.range(of: start), let close = text.range(of: end, range: open.upperBound..<text.endIndex)
        else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
    }

    static func encoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// A secret as a file could hold it: raw, percent-encoded (either case), JSON-escaped.
    static func forms(of secret: String) -> Set<String> {
        let encoded = encoded(secret)
        return [secret, encoded, encoded.lowercased(), secret.replacingOccurrences(of: "/", with: "\\/")]
    }

    /// The sign-in URL `sharelane login` prints.
    static func printedSignInURL(_ log: String, of process: ProcessExit) throws -> String {
        try LoginCommandTests.signInURL(inOutputAt: log, of: process)
    }
}

/// A client that acts as a browser would but never follows a redirect, so a test sees each answer as sent.
final class UnfollowingBrowser: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    struct Answer {
        var status: Int
        var headers: [String: String]
        var text: String
    }

    private lazy var session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        return URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }()

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// A GET of `address`, or with `form`, a POST of it as `application/x-www-form-urlencoded`.
    func send(
        _ address: String, form: [(String, String)]? = nil, json: String? = nil, headers: [String: String] = [:]
    ) throws -> Answer {
        guard let url = URL(string: address) else { throw FixtureError(message: "bad URL \(address)") }
        var request = URLRequest(url: url)
        if let json {
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(json.utf8)
        }
        if let form {
            request.httpMethod = "POST"
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(
                form.map { "\(RecordCredentialTests.encoded($0.0))=\(RecordCredentialTests.encoded($0.1))" }
                    .joined(separator: "&").utf8)
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let semaphore = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: (Data?, URLResponse?, (any Error)?) = (nil, nil, nil)
        session.dataTask(with: request) { data, response, error in
            result = (data, response, error)
            semaphore.signal()
        }.resume()
        semaphore.wait()
        if let error = result.2 { throw error }
        let response = result.1 as? HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in response?.allHeaderFields ?? [:] {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        return Answer(
            status: response?.statusCode ?? 0, headers: fields,
            text: result.0.map { String(decoding: $0, as: UTF8.self) } ?? "")
    }
}

/// A listener on a free loopback port that counts the connections it is offered, answering each with a page
/// of its own.
final class RedirectDecoy: @unchecked Sendable {
    let port: Int
    private let socket: Int32
    private let lock = NSLock()
    private var count = 0
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    var connections: Int { lock.withLock { count } }

    init() throws {
        #if canImport(Glibc)
            let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard descriptor >= 0, bound == 0, listen(descriptor, 16) == 0 else {
            throw FixtureError(message: "the decoy cannot listen on a loopback port: errno \(errno)")
        }
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(descriptor, $0, &length) }
        }
        socket = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in serve() }.start()
    }

    private func serve() {
        defer { done.signal() }
        while !lock.withLock({ stopped }) {
            var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let client = accept(socket, nil, nil)
            guard client >= 0 else { continue }
            lock.withLock { count += 1 }
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = read(client, &buffer, buffer.count)
            let page = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\ndecoy"
            _ = page.withCString { write(client, $0, strlen($0)) }
            close(client)
        }
    }

    func stop() {
        let first = lock.withLock {
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        done.wait()
        close(socket)
    }
}
