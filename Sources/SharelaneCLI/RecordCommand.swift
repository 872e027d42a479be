import ArgumentParser
import AsyncHTTPClient
import CloudKitWire
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Parity
import ShareKit

/// `sharelane record`: a loopback proxy in front of CloudKit Web Services that writes each exchange as a
/// case file, every credential masked.
struct RecordCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a client's exchanges with CloudKit Web Services, credentials masked, for sharelane replay.",
        discussion: """
            Listens on loopback and forwards every request unchanged to --upstream (Apple's service by default, \
            or any http(s) URL, such as a sharelane serve), and writes each exchange to --out as one case \
            file (NNNN-OPERATION.json), in order: method, path, query, headers, request body, status and answer \
            body. Point a client at the printed address as you would at sharelane serve (CloudKit JS through \
            services.fetch, curl, a Swift client's base URL).

            No credential reaches the files or the terminal: the API token becomes <api-token>, each web auth \
            token <web-auth-token:person-N> (one N for every token of one person's chain), server-to-server key \
            IDs <server-key:N>, signatures <signature> and other secrets (cookies, a form's check) <masked>, in \
            queries, headers, JSON and form bodies, sign-in pages, redirects and answers, decided on each exchange \
            before it is written. --redact-field masks a record field's values too, for recordings of real data. \
            Case files are written readable by you only (0600) in a folder only you can open (made 0700; an \
            empty one is tightened to 0700; one that holds other files and that others can open is refused).

            It is a proxy for one service: redirects are handed to the client as they are, never followed, and \
            it listens on loopback only unless --host names another address, which it then says. Ctrl-C stops. \
            See "Checking the emulator against your container" in Docs/CloudKit.md.
            """)

    static let examples = [
        "sharelane record --out recordings/my-app",
        "sharelane record --upstream http://127.0.0.1:8420 --out recordings/local --port 8421",
        "sharelane record --out recordings/real-data --redact-field email --redact-field phone",
    ]

    /// Apple's service.
    static let appleService = "https://api.apple-cloudkit.com"

    @Option(help: ArgumentHelp("The service to forward to: an http:// or https:// URL.", valueName: "url"))
    var upstream = RecordCommand.appleService

    @Option(
        help: ArgumentHelp("The folder to write the case files to (made if missing; must hold none).", valueName: "dir")
    )
    var out: String

    @Option(
        help: ArgumentHelp(
            "The address to listen on (loopback by default).",
            discussion: "Another address (0.0.0.0: every interface) lets other machines use the upstream through "
                + "this proxy, with your client's credentials recorded: record says so when it starts."))
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (default 8421; 0 picks a free one).")
    var port = 8421

    @Option(
        name: .customLong("redact-field"),
        help: ArgumentHelp(
            "Mask this record field's values in the case files (repeatable).",
            discussion: "The value becomes <redacted> (a list keeps its length); the field's type stays.",
            valueName: "name"))
    var redactField: [String] = []

    @Option(
        help: ArgumentHelp(
            "Write this note into every case file: how the recording was made.", valueName: "text"))
    var note: String?

    @OptionGroup var logging: LoggingOptions

    static var defaultLogLevel: Logger.Level { .warning }

    /// The upstream's base URL without a trailing slash, and whether it is on this machine.
    func upstreamBase() throws -> (base: String, loopback: Bool) { try Self.upstreamBase(upstream) }

    /// The base URL of `upstream` without a trailing slash, and whether it is on this machine.
    static func upstreamBase(_ upstream: String) throws -> (base: String, loopback: Bool) {
        guard let url = URL(string: upstream), let scheme = url.scheme?.lowercased(),
            ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty, url.query == nil
        else {
            throw ValidationError(
                "--upstream \"\(upstream)\" is not an http:// or https:// URL: give \(appleService) or a "
                    + "sharelane serve's address such as http://127.0.0.1:8420")
        }
        var base = upstream
        while base.hasSuffix("/") { base.removeLast() }
        return (base, ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host.lowercased()))
    }

    func validate() throws {
        _ = try upstreamBase()
        guard (0...65535).contains(port) else { throw ValidationError("--port \(port) is not a port: give 0…65535") }
        guard !out.isEmpty else { throw ValidationError("--out is empty: give the folder to write the case files to") }
    }

    func run() async throws {
        let (base, loopback) = try upstreamBase()
        try Self.makeFolder(out, option: "--out")
        let logger = Logger(label: "sharelane.record")
        let recorder = ExchangeRecorder(
            folder: out, mask: CredentialMask(redactedFields: redactField), note: note.map(SecretMask.apply))
        let proxy = ForwardingProxy(upstream: base, keepsHost: loopback, recorder: recorder, logger: logger)
        let upstream = self.upstream
        let out = self.out
        let host = self.host
        let application = Self.proxyApplication(proxy, host: host, port: port, logger: logger) { bound, port in
            Terminal.write(Self.banner(bound: bound, port: port, upstream: upstream, out: out))
        }
        do {
            try await application.runService()
        } catch {
            throw ServeCommand.cannotListen(host: host, port: port, reason: "\(error)")
        }
        let count = await recorder.count
        Terminal.write("\(count) exchange\(count == 1 ? "" : "s") recorded in \(out)\n")
    }
}

extension RecordCommand {
    /// What `record` says when it listens: the address it bound, and, when that is not loopback, that other
    /// machines can reach the upstream through it.
    static func banner(bound: String?, port: Int, upstream: String, out: String) -> String {
        let ip = bound ?? "127.0.0.1"
        let address = ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
        var text = "sharelane record: http://\(address) forwards to \(upstream), writing case files to \(out)\n"
        if isLoopback(ip) {
            text += "  point your client at http://\(address) as at sharelane serve    (Ctrl-C stops)\n"
        } else {
            let everywhere = ip == "0.0.0.0" || ip == "::"
            text +=
                "  listening on \(everywhere ? "every interface" : "\(address), not loopback only"): other machines "
                + "that reach this one can use \(upstream) through it, and their exchanges are recorded    "
                + "(Ctrl-C stops)\n"
        }
        return text + "\n"
    }

    /// Whether `ip` is an address of this machine only (127.0.0.0/8, ::1).
    static func isLoopback(_ ip: String) -> Bool {
        ip.hasPrefix("127.") || ip == "::1" || ip == "0:0:0:0:0:0:0:1" || ip.lowercased() == "::ffff:127.0.0.1"
    }

    /// Makes the folder a recording is written to, only its owner able to open it (0700), refusing a file or a
    /// folder that holds a recording already. An empty folder is tightened to 0700; a folder that holds other
    /// files and that other users can open is refused rather than changed.
    /// - Throws: `CommandFailure` naming the folder and what to give instead.
    static func makeFolder(_ out: String, option: String) throws {
        var isFolder: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: out, isDirectory: &isFolder)
        if exists, !isFolder.boolValue {
            throw CommandFailure.usage("\(option) \(out) is a file: give a folder for the case files")
        }
        let existing = Recording.existingCount(in: out)
        if existing > 0 {
            throw CommandFailure.conflict(ParityError.notEmpty(folder: out, count: existing).description)
        }
        if exists {
            let mode = ((try? FileManager.default.attributesOfItem(atPath: out))?[.posixPermissions] as? Int) ?? 0
            guard mode & 0o077 != 0 else { return }
            let empty = ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? [""]).isEmpty
            guard empty else {
                throw CommandFailure.conflict(
                    "\(option) \(out) holds other files and other users can open it (mode "
                        + String(format: "%04o", mode & 0o7777) + "): give a new or empty folder, or make it yours "
                        + "alone first (chmod 700 \(out))")
            }
            guard chmod(out, 0o700) == 0 else {
                throw CommandFailure.input(
                    "cannot make the folder \(out) yours alone (chmod 700): \(String(cString: strerror(errno))); "
                        + "give a folder of your own")
            }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure.input("cannot make the folder \(out): \(error.localizedDescription)")
        }
        guard chmod(out, 0o700) == 0 else {
            throw CommandFailure.input(
                "cannot make the folder \(out) yours alone (chmod 700): \(String(cString: strerror(errno)))")
        }
    }

    /// The recording proxy's server on `host`:`port`; `onRunning` hears the port it listens on.
    static func proxyApplication(
        _ proxy: ForwardingProxy, host: String, port: Int, logger: Logger,
        onRunning: @escaping @Sendable (Int) -> Void
    ) -> some ApplicationProtocol {
        proxyApplication(proxy, host: host, port: port, logger: logger) { _, port in onRunning(port) }
    }

    /// The recording proxy's server on `host`:`port`; `onRunning` hears the address and port it really bound.
    static func proxyApplication(
        _ proxy: ForwardingProxy, host: String, port: Int, logger: Logger,
        onRunning: @escaping @Sendable (_ bound: String?, _ port: Int) -> Void
    ) -> some ApplicationProtocol {
        Application(
            responder: CallbackResponder { (request: Request, _: BasicRequestContext) in await proxy.forward(request) },
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: "sharelane-record"),
            onServerRunning: { channel in
                onRunning(channel.localAddress?.ipAddress, channel.localAddress?.port ?? port)
            }, logger: logger)
    }
}

/// Numbers the exchanges in the order they arrive and writes each, masked, as it completes.
actor ExchangeRecorder {
    private let folder: String
    private var mask: CredentialMask
    /// Whether each file written is named on standard output (`record`), or not (`conformance`, whose
    /// output is its checks).
    private let announces: Bool
    /// Written into every case file: how the recording was made.
    private let note: String?
    private var next = 0
    private(set) var count = 0

    init(folder: String, mask: CredentialMask, announces: Bool = true, note: String? = nil) {
        self.folder = folder
        self.mask = mask
        self.announces = announces
        self.note = note
    }

    func number() -> Int {
        next += 1
        return next
    }

    /// Masks and writes one exchange, and says so on standard output (the path only: a query can hold
    /// credentials).
    func write(
        number: Int, method: String, path: String, rawQuery: String?, requestHeaders: [(String, String)],
        requestBody: Data?, status: Int, responseHeaders: [(String, String)], responseBody: Data?
    ) {
        var exchange = mask.mask(
            method: method, path: path, rawQuery: rawQuery, requestHeaders: requestHeaders, requestBody: requestBody,
            status: status, responseHeaders: responseHeaders, responseBody: responseBody)
        exchange.note = note
        let name = Recording.fileName(number: number, exchange: exchange)
        let file = (folder as NSString).appendingPathComponent(name)
        do {
            try Recording.write(exchange.fileText, to: file)
            count += 1
            if announces { Terminal.write("\(name)  \(method) \(exchange.request.path) → \(status)\n") }
        } catch {
            Terminal.printError(
                "error: cannot write \(file): \(error.localizedDescription); this exchange is not recorded")
        }
    }
}

/// Forwards a request to the upstream unchanged and hands its answer back, recording both.
struct ForwardingProxy: Sendable {
    let upstream: String
    /// On a loopback upstream (another serve), the client's Host goes along, so that the URLs serve hands out
    /// (uploads, downloads) lead back through the proxy and are recorded too.
    let keepsHost: Bool
    let recorder: ExchangeRecorder
    let logger: Logger

    /// The client the proxy forwards with: a redirect is the upstream's answer, handed to the client as it is.
    /// Followed, it would make the proxy itself fetch whatever the upstream names (a port on this machine, with
    /// the token the redirect carries) and record that as the service's answer.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(2)
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit =
            WebServicesClient.maxConnectionsPerHost
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// How the bytes travelled, not what they said: never forwarded.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "transfer-encoding", "te", "upgrade", "proxy-connection", "proxy-authorization",
        "content-length", "host", "accept-encoding",
    ]

    func forward(_ request: Request) async -> Response {
        var request = request
        let number = await recorder.number()
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: CloudKitLimits.bodyBytes)
        } catch {
            return Self.failure(.contentTooLarge, "the request body is larger than CloudKit takes")
        }
        let path = request.uri.path
        let rawQuery = request.uri.query
        var outgoing = HTTPClientRequest(url: upstream + path + (rawQuery.map { "?\($0)" } ?? ""))
        outgoing.method = .init(rawValue: request.method.rawValue)
        var requestHeaders: [(String, String)] = []
        for field in request.headers {
            let name = field.name.canonicalName
            requestHeaders.append((name, field.value))
            if !Self.hopByHop.contains(name) { outgoing.headers.add(name: name, value: field.value) }
        }
        if keepsHost, let authority = request.head.authority {
            outgoing.headers.replaceOrAdd(name: "host", value: authority)
        }
        if body.readableBytes > 0 { outgoing.body = .bytes(body) }
        let answer: HTTPClientResponse
        let upstreamBody: ByteBuffer
        do {
            answer = try await Self.client.execute(outgoing, timeout: .seconds(120))
            upstreamBody = try await answer.body.collect(upTo: 256 << 20)
        } catch {
            Terminal.printError(
                "error: \(request.method.rawValue) \(path): cannot reach \(upstream): \(error); not recorded")
            return Self.failure(.badGateway, "sharelane record cannot reach \(upstream): \(error)")
        }
        let responseHeaders = answer.headers.map { ($0.name, $0.value) }
        let isText = answer.headers["content-type"].contains { $0.contains("json") || $0.hasPrefix("text/") }
        let answerBody =
            keepsHost && isText
            ? Self.pointingBack(upstreamBody, from: upstream, to: request.head.authority) : upstreamBody
        await recorder.write(
            number: number, method: request.method.rawValue, path: path, rawQuery: rawQuery,
            requestHeaders: requestHeaders, requestBody: body.readableBytes > 0 ? Data(buffer: body) : nil,
            status: Int(answer.status.code), responseHeaders: responseHeaders,
            responseBody: answerBody.readableBytes > 0 ? Data(buffer: answerBody) : nil)
        var headers = HTTPFields()
        for (name, value) in responseHeaders where !Self.hopByHop.contains(name.lowercased()) {
            if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
        }
        return Response(
            status: .init(code: Int(answer.status.code)), headers: headers, body: ResponseBody(byteBuffer: answerBody))
    }

    /// serve names the address its connection reached in the URLs it hands out (the webcourier's), never a
    /// request's Host; through the proxy those URLs name the proxy instead, as a reverse proxy rewrites its
    /// upstream's own address, so the client's next request comes back through it and is recorded too.
    static func pointingBack(_ body: ByteBuffer, from upstream: String, to authority: String?) -> ByteBuffer {
        guard let authority, body.readableBytes > 0, let upstreamURL = URL(string: upstream),
            let port = upstreamURL.port
        else { return body }
        var text = String(buffer: body)
        let scheme = upstreamURL.scheme ?? "http"
        var changed = false
        for host in ["127.0.0.1", "localhost", "[::1]"] {
            for separator in ["//", "\\/\\/"] {
                let own = "\(scheme):\(separator)\(host):\(port)"
                guard text.contains(own) else { continue }
                text = text.replacingOccurrences(of: own, with: "http:\(separator)\(authority)")
                changed = true
            }
        }
        return changed ? ByteBuffer(string: text) : body
    }

    private static func failure(_ status: HTTPResponse.Status, _ reason: String) -> Response {
        let text = JSONValue.object(["serverErrorCode": .string("INTERNAL_ERROR"), "reason": .string(reason)])
            .jsonText()
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: SecretMask.apply(text))))
    }
}
