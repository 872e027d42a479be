import ArgumentParser
import AsyncHTTPClient
import CloudKitWire
import Crypto
import Emulator
import Foundation
import Hummingbird
import Logging
import NIOCore
import Parity
import ServiceLifecycle
import ShareKit
import ShareStoreSQLite

/// `sharelane replay`: sends a recording's requests to an emulator and compares each answer, key by key.
struct ReplayCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay a recording against the emulator and say where its answers differ, key by key.",
        discussion: """
            Sends each request of DIR (a folder sharelane record wrote) in order to a fresh in-process \
            emulator, or to --store http://HOST:PORT (a sharelane serve, with its API token in \
            CLOUDKIT_API_TOKEN), and compares each answer with the recorded one key by key: missing and extra \
            keys, another type, another value, another status or serverErrorCode.

            Values that differ between runs by nature (change tags, timestamps, user record names, sync \
            tokens, continuation markers, short GUIDs and share URLs, asset URLs and checksums) are compared \
            as placeholders that must correspond: the record whose tag was <tag:3> in the recording must carry \
            <tag:3> in the replay. Errors' UUIDs and reasons (words each server phrases its own way) need only \
            be there. A later request sends the replay's own values where \
            the recording sent one of these; each person of the recording signs in as a user of the emulator.

            A recording is data, never a program: only requests of CloudKit Web Services are sent, each as a \
            path on that one server. A case file's Host or X-Forwarded-Host header, a path that is a URL (or \
            becomes one with a value carried from an earlier answer), serve's own /_sharelane/ endpoints, its \
            console and its sign-in form are refused, each named in the report; the others are replayed.

            Prints `same`, the differences or `refused` for each exchange and `N exchanges, M the same, K \
            differ` (and how many were refused); exits 1 when anything differs or was refused. An --allow file marks deliberate differences (PATH: REASON a line; [*] \
            for any index), which fail nothing. Nothing it writes holds a credential.
            """)

    static let examples = [
        "sharelane replay recordings/my-app",
        "sharelane replay recordings/my-app --store http://127.0.0.1:8420 --format json",
        "sharelane replay Tests/Parity/notes-permissions --allow allowed.txt --report junit:parity.xml",
    ]

    @Argument(help: ArgumentHelp("The recording: a folder of case files.", valueName: "dir"))
    var recording: String

    @Option(
        help: ArgumentHelp(
            "Replay against this server (http://HOST:PORT) instead of a fresh in-process emulator.",
            discussion: "Its API token comes from CLOUDKIT_API_TOKEN.", valueName: "url"))
    var store: String?

    @Option(help: ArgumentHelp("text or json.", valueName: "format"))
    var format = "text"

    @Option(
        help: ArgumentHelp(
            "Also write the report for CI: junit:FILE or json:FILE (repeatable).", valueName: "format:file"))
    var report: [String] = []

    @Option(
        help: ArgumentHelp(
            "Differences known to be deliberate: a file of PATH: REASON lines.", valueName: "file"))
    var allow: String?

    @OptionGroup var logging: LoggingOptions

    static var defaultLogLevel: Logger.Level { .warning }

    /// The reports `--report` asks for.
    func reports() throws -> [(format: String, path: String)] { try ReportFiles.requests(report) }

    /// The server of `--store`: its base URL.
    func target() throws -> String? {
        guard let store else { return nil }
        guard let url = URL(string: store), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty, url.query == nil, url.path.isEmpty || url.path == "/"
        else {
            throw ValidationError(
                "--store \"\(store)\" is not a server's address: give http://HOST:PORT, such as http://127.0.0.1:8420")
        }
        var base = store
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    func validate() throws {
        guard ["text", "json"].contains(format) else {
            throw ValidationError("--format \"\(format)\" is not text or json")
        }
        _ = try reports()
        _ = try target()
    }

    func run() async throws {
        let exchanges: [(file: String, exchange: RecordedExchange)]
        var allowList = AllowList()
        do {
            exchanges = try Recording.read(recording)
            if let allow {
                guard let text = try? String(contentsOfFile: allow, encoding: .utf8) else {
                    throw CommandFailure.input("cannot read the --allow file \(allow): check the path")
                }
                allowList = try AllowList(text: text, file: allow)
            }
        } catch let error as ParityError {
            throw CommandFailure.input(error.description)
        }
        let logger = Logger(label: "sharelane.replay")
        let result: ReplayReport
        if let base = try target() {
            guard let token = ProcessInfo.processInfo.environment[Credentials.apiTokenVariable], !token.isEmpty else {
                throw CommandFailure.usage(
                    "replay against \(base) needs its API token: set CLOUDKIT_API_TOKEN (serve prints it on start, "
                        + "or takes one with --api-token)")
            }
            result = try await Self.replay(exchanges, apiToken: token, base: base, allowList: allowList)
        } else {
            result = try await replayInProcess(exchanges, allowList: allowList, logger: logger)
        }
        Terminal.write(format == "json" ? result.json : result.text)
        for (format, path) in try reports() {
            let text = format == "junit" ? result.junitXML(recording: recording) : result.json
            do {
                try SecretMask.apply(text).write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                throw CommandFailure.input(
                    "cannot write the \(format) report to \(path): \(error.localizedDescription)")
            }
        }
        if !result.succeeded { throw ExitCode.failure }
    }

    /// Replays against a fresh emulator over an in-memory store, served on a free loopback port for the run.
    private func replayInProcess(
        _ exchanges: [(file: String, exchange: RecordedExchange)], allowList: AllowList, logger: Logger
    ) async throws -> ReplayReport {
        let token = EmulatorConfiguration.makeAPIToken()
        let keys = try ReplayKeys(for: exchanges.map(\.exchange))
        return try await Self.withInProcessEmulator(apiToken: token, keyring: keys.keyring, logger: logger) { base in
            try await Self.replay(exchanges, apiToken: token, base: base, allowList: allowList, keys: keys)
        }
    }

    /// Runs `body` with the base URL of a fresh emulator over an in-memory store, on a free loopback port.
    static func withInProcessEmulator<T>(
        apiToken: String, keyring: ServerKeyring = ServerKeyring(), logger: Logger,
        _ body: (String) async throws -> T
    ) async throws -> T {
        SecretMask.register(apiToken)
        let emulator = CloudKitEmulator(
            worlds: EmbeddedStore.worldsInMemory(logger: logger),
            configuration: EmulatorConfiguration(host: "127.0.0.1", port: 0, apiToken: apiToken, serverKeys: keyring),
            logger: logger)
        return try await LoopbackService.with(
            "the emulator", logger: logger, make: { running in emulator.application { running($0) } }
        ) { port in try await body("http://127.0.0.1:\(port)") }
    }

    static func replay(
        _ exchanges: [(file: String, exchange: RecordedExchange)], apiToken: String, base: String, allowList: AllowList,
        keys: ReplayKeys = ReplayKeys()
    ) async throws -> ReplayReport {
        let replayer = Replayer(
            exchanges: exchanges, apiToken: apiToken, scope: .webServices, allowList: allowList,
            signedKeys: Set(keys.signers.keys))
        do {
            return try await replayer.run { outgoing in try await send(replayed: keys.signed(outgoing), to: base) }
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure.store("cannot reach \(base): \(error); start the server, or check --store")
        }
    }

    /// Sends one request of a recording as the client sent it, but for its values: to its path on `base`,
    /// never anywhere else.
    /// - Throws: `CommandFailure` for a path that is not one (`ReplayScope` refuses those before they get here).
    static func send(replayed request: Replayer.Outgoing, to base: String) async throws -> RecordedExchange.Response {
        guard request.path.hasPrefix("/"), !request.path.hasPrefix("//") else {
            throw CommandFailure.input(
                "refusing to send \(request.method) \(request.path): it is not a path on \(base)")
        }
        return try await send(request, to: base)
    }

    /// Sends one request of sharelane's own (a conformance check's): to `base`, or to the absolute URL its path
    /// is (an upload URL the service handed out, on Apple's content hosts). Never a recording's request: those
    /// go through `send(replayed:to:)`.
    static func send(_ request: Replayer.Outgoing, to base: String) async throws -> RecordedExchange.Response {
        let query = RecordedExchange.queryString(request.query)
        let url = request.path.hasPrefix("http://") || request.path.hasPrefix("https://") ? "" : base
        var outgoing = HTTPClientRequest(url: url + request.path + (query.isEmpty ? "" : "?\(query)"))
        outgoing.method = .init(rawValue: request.method)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let data = request.body.data { outgoing.body = .bytes(ByteBuffer(bytes: data)) }
        let answer = try await WebServicesClient.failFastClient.execute(outgoing, timeout: .seconds(60))
        let body = try await answer.body.collect(upTo: 256 << 20)
        var headers: [String: String] = [:]
        for header in answer.headers { headers[header.name.lowercased()] = header.value }
        return RecordedExchange.Response(
            status: Int(answer.status.code), headers: headers,
            body: RecordedExchange.Body(body.readableBytes > 0 ? Data(buffer: body) : nil))
    }
}

extension ReplayScope {
    /// The requests of CloudKit Web Services, from the one catalogue of operations (`WireOperation`).
    static let webServices = ReplayScope(
        routes: WireOperation.requestPatterns.map { .init(method: $0.method.rawValue, pattern: $0.pattern) })
}

/// Keys of the replay's own for the server-to-server keys of a recording: the in-process emulator trusts
/// them, and the replay signs each request of `<server-key:N>` with the Nth.
struct ReplayKeys: Sendable {
    private(set) var signers: [String: RequestSigner] = [:]
    private(set) var keyring = ServerKeyring()

    init() {}

    init(for exchanges: [RecordedExchange]) throws {
        for (index, placeholder) in Replayer.serverKeys(in: exchanges).sorted().enumerated() {
            let pem = P256.Signing.PrivateKey().pemRepresentation
            let keyID = "replay-key-\(index + 1)"
            signers[placeholder] = try RequestSigner(keyID: keyID, pem: pem)
            try keyring.add(keyID: keyID, pem: pem)
        }
    }

    /// The request signed anew with the replay's key for its recorded one, at this moment.
    func signed(_ request: Replayer.Outgoing) throws -> Replayer.Outgoing {
        guard let placeholder = Replayer.serverKey(of: request), let signer = signers[placeholder] else {
            return request
        }
        var request = request
        for name in [WireSpelling.keyIDHeader, WireSpelling.dateHeader, WireSpelling.signatureHeader] {
            request.headers.removeValue(forKey: name.lowercased())
        }
        for header in try signer.headers(date: Date(), body: request.body.data ?? Data(), subpath: request.path) {
            request.headers[header.name.lowercased()] = header.value
        }
        return request
    }
}

/// A server of the command's own on a free loopback port for as long as a body runs: the emulator a replay
/// meets, the recording proxy of a conformance run.
enum LoopbackService {
    /// Starts the service `make` builds (handing it the callback it calls with its port once it listens), runs
    /// `body` with the port, then stops it.
    /// - Throws: `CommandFailure` when it cannot start; what `body` throws.
    static func with<T>(
        _ what: String, logger: Logger, make: (@escaping @Sendable (Int) -> Void) -> any Service,
        _ body: (Int) async throws -> T
    ) async throws -> T {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let service = make { port in
            continuation.yield(port)
            continuation.finish()
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [service], logger: logger))
        let server = Task { () -> String? in
            defer { continuation.finish() }
            do {
                try await group.run()
                return nil
            } catch {
                return "\(error)"
            }
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            throw CommandFailure.store("cannot start \(what): \(await server.value ?? "it stopped")")
        }
        do {
            let result = try await body(port)
            await group.triggerGracefulShutdown()
            _ = await server.value
            return result
        } catch {
            await group.triggerGracefulShutdown()
            _ = await server.value
            throw error
        }
    }
}
