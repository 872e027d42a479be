import ArgumentParser
import CloudKitWire
import Emulator
import Foundation
import Logging
import Parity
import ShareKit

/// `sharelane conformance`: the reference conformance checks against a service, each exchange recorded.
struct ConformanceCommand: AsyncParsableCommand, LoggingCommand, CommandExamples {
    static let configuration = CommandConfiguration(
        commandName: "conformance",
        abstract: "Check a service's answers against Apple's reference, key by key, recording every exchange.",
        discussion: """
            Plays every operation of CloudKit Web Services against --store in shapes that make its answer hold \
            each of its dictionaries (saved records, a share, deletions, per-entry errors), and checks each \
            answer against the table of the reference's dictionaries (Docs/Reference/Dictionaries.md): every key \
            the reference always returns present, every key documented, each value of its type, enum words \
            from their sets, error codes from the endpoint's list. A malformed request must answer \
            BAD_REQUEST, one without a user AUTHENTICATION_REQUIRED with a redirectURL.

            --store is a sharelane serve (http://HOST:PORT, its API token in CLOUDKIT_API_TOKEN; Alice and Bob \
            sign in by address), your container (cloudkit:CONTAINER[/ENVIRONMENT], after sharelane login, or \
            with CLOUDKIT_API_TOKEN and CLOUDKIT_WEB_AUTH_TOKEN; the signed-in user plays both parts, and \
            serve's own endpoints are skipped), or memory: (a fresh emulator in this process). The checks \
            make zones ConformanceLists, ConformanceTrips and ConformanceNew, record types ConformanceTodo \
            and ConformanceTrip, and subscriptions conformance-*; the zones and subscriptions are deleted \
            before and after the run.

            --record DIR writes every exchange to DIR as sharelane record does, credentials masked: a parity \
            recording that sharelane replay DIR holds the emulator to. Prints one line a check (passed, failed \
            with the key paths and what differs, or skipped) and a summary; exits 1 when a check fails.
            """)

    static let examples = [
        "sharelane conformance --store http://127.0.0.1:8420 --record recordings/conformance",
        "sharelane conformance --store cloudkit:iCloud.com.example.App --record recordings/apple",
        "sharelane conformance --store memory: --format json",
    ]

    @OptionGroup var storeOptions: StoreOptions

    @Option(
        help: ArgumentHelp(
            "Record every exchange to this folder, credentials masked (made if missing; must hold no recording).",
            valueName: "dir"))
    var record: String?

    @Option(help: ArgumentHelp("The container of an http: store (default the default one).", valueName: "name"))
    var container: String?

    @Option(help: ArgumentHelp("development or production (cloudkit:CONTAINER/ENVIRONMENT wins).", valueName: "name"))
    var environment = "development"

    @Option(help: ArgumentHelp("text or json.", valueName: "format"))
    var format = "text"

    @Option(
        help: ArgumentHelp(
            "The table of the reference's dictionaries (default: the one installed beside sharelane).",
            valueName: "file"))
    var table: String?

    @OptionGroup var logging: LoggingOptions

    static var defaultLogLevel: Logger.Level { .warning }

    func validate() throws {
        guard ["text", "json"].contains(format) else {
            throw ValidationError("--format \"\(format)\" is not text or json")
        }
        guard CloudKitEnvironment(rawValue: environment) != nil else {
            throw ValidationError("--environment \"\(environment)\" is not development or production")
        }
        if let record, record.isEmpty { throw ValidationError("--record is empty: give the folder to record to") }
    }

    /// The service the checks meet: where to send, with what credentials, as whom.
    struct Service {
        var base: String
        var container: String
        var environment: String
        var apiToken: String
        var people: ConformanceRun.People
        /// The store as the output names it.
        var name: String
        /// What the service is, as a recording's note says (no address: it changes from run to run).
        var kind: String
    }

    func run() async throws {
        let logger = Logger(label: "sharelane.conformance")
        let table = try loadTable()
        let url = storeOptions.url
        let location: StoreLocator.Location
        do {
            location = try StoreLocator.location(of: url)
        } catch let refusal as StoreLocatorError {
            throw CommandFailure.input(refusal.description)
        }
        let outcomes: [ConformanceRun.Outcome]
        let recorded: Int?
        switch location {
        case .sqlite:
            throw CommandFailure.usage(
                "conformance checks a service over the wire, not the store file '\(url)': give --store "
                    + "http://HOST:PORT (a sharelane serve), cloudkit:CONTAINER (your container, after sharelane "
                    + "login) or memory: (a fresh emulator in this process)")
        case .memory:
            let token = EmulatorConfiguration.makeAPIToken()
            (outcomes, recorded) = try await ReplayCommand.withInProcessEmulator(apiToken: token, logger: logger) {
                base in
                let service = Service(
                    base: base, container: container ?? StoreLocator.defaultContainer, environment: environment,
                    apiToken: token, people: .signIn, name: url, kind: "a fresh in-process emulator")
                return try await check(service, table: table, logger: logger)
            }
        case .http, .cloudKit:
            let service = try self.service(url: url, location: location, logger: logger)
            (outcomes, recorded) = try await check(service, table: table, logger: logger)
        }
        let passed = outcomes.count { $0.passed && $0.skipped == nil }
        let failed = outcomes.count { !$0.passed }
        let skipped = outcomes.count { $0.skipped != nil }
        if format == "json" {
            var object: [String: JSONValue] = [
                "store": .string(url), "checks": .array(outcomes.map(Self.json)), "passed": .int(Int64(passed)),
                "failed": .int(Int64(failed)), "skipped": .int(Int64(skipped)),
            ]
            if let record, let recorded {
                object["recording"] = .string(record)
                object["exchanges"] = .int(Int64(recorded))
            }
            Terminal.write(SecretMask.apply(JSONValue.object(object).jsonText(pretty: true)) + "\n")
        } else {
            var summary = "\(outcomes.count) checks, \(passed) passed, \(failed) failed"
            if skipped > 0 { summary += ", \(skipped) skipped" }
            Terminal.write(summary + "\n")
            if let record, let recorded {
                Terminal.write(
                    "\(recorded) exchange\(recorded == 1 ? "" : "s") recorded in \(record): replay them against the "
                        + "emulator with `sharelane replay \(record)`\n")
            }
        }
        if failed > 0 { throw ExitCode.failure }
    }

    /// The table: `--table`, else the one installed beside the binary or in its checkout.
    func loadTable() throws -> ReferenceTable {
        let path =
            table
            ?? SharedDataFile.find(
                installed: "reference-dictionaries.json", inCheckout: "Docs/Reference/\(ReferenceTable.fileName)")
        guard let path else {
            throw CommandFailure.input(
                "cannot find the table of the reference's dictionaries that the checks read (reference-dictionaries"
                    + ".json in PREFIX/share/sharelane, where make install puts it): give --table with the path of "
                    + "Docs/Reference/Dictionaries.json from sharelane's source")
        }
        do {
            return try ReferenceTable.load(from: URL(fileURLWithPath: path))
        } catch let error as ParityError {
            throw CommandFailure.input(error.description)
        }
    }

    /// An `http:` or `cloudkit:` store's address and credentials, as every command finds them (the
    /// environment, `--api-token`, `sharelane login`'s token file).
    /// - Throws: `CommandFailure` saying what is missing and what to do.
    func service(url: String, location: StoreLocator.Location, logger: Logger) throws -> Service {
        let environment = CloudKitEnvironment(rawValue: environment) ?? .development
        let store = try storeOptions.open(for: nil, container: container, environment: environment, logger: logger)
        guard let endpoint = (store as? any ServiceStore)?.endpoint else {
            throw CommandFailure.usage(
                "the store '\(url)' is not a service over the wire: give http://HOST:PORT or cloudkit:")
        }
        switch location {
        case .cloudKit:
            guard let apiToken = endpoint.apiToken, let webAuthToken = endpoint.webAuthToken else {
                throw CommandFailure.usage(
                    "conformance against \(endpoint) needs the API token and a signed-in user (its private "
                        + "database, shares and users): sign in with `sharelane login --store cloudkit:"
                        + "\(endpoint.container)` (with CLOUDKIT_API_TOKEN set once), or set CLOUDKIT_API_TOKEN and "
                        + "CLOUDKIT_WEB_AUTH_TOKEN; a server-to-server key alone reaches only the public database. "
                        + "See \"Checking the emulator against your container\" in Docs/CloudKit.md")
            }
            return Service(
                base: endpoint.baseURL, container: endpoint.container, environment: endpoint.environment,
                apiToken: apiToken, people: .token(webAuthToken), name: url, kind: "Apple's service (\(endpoint))")
        default:
            guard let apiToken = endpoint.apiToken else {
                throw CommandFailure.usage(StoreLocatorError.missingAPIToken(url).description)
            }
            return Service(
                base: endpoint.baseURL, container: endpoint.container, environment: endpoint.environment,
                apiToken: apiToken, people: .signIn, name: url, kind: "a sharelane serve")
        }
    }

    /// Runs the checks against `service`, through a recording proxy when `--record` asks; prints each
    /// outcome as it is known (text). Answers the outcomes and how many exchanges were recorded.
    func check(_ service: Service, table: ReferenceTable, logger: Logger) async throws -> (
        [ConformanceRun.Outcome], Int?
    ) {
        SecretMask.register(service.apiToken)
        if case .token(let token) = service.people { SecretMask.register(token) }
        let run = ConformanceRun(
            table: table, container: service.container, environment: service.environment,
            apiToken: service.apiToken, people: service.people)
        let text = format == "text"
        let progress: @Sendable (ConformanceRun.Outcome) -> Void = { outcome in
            if text { Terminal.write(SecretMask.apply(Self.line(outcome)) + "\n") }
        }
        // A service that is not there is said once, not as every check's failure through the proxy.
        do {
            _ = try await ReplayCommand.send(
                Replayer.Outgoing(
                    method: "GET",
                    path: "/database/1/\(service.container)/\(service.environment)/public/users/caller",
                    query: [.init(name: "ckAPIToken", value: service.apiToken)], headers: [:], body: .none),
                to: service.base)
        } catch {
            throw CommandFailure.store("cannot reach \(service.name): \(error); start the server, or check --store")
        }
        guard let record else {
            return (try await Self.run(run, base: service.base, progress: progress), nil)
        }
        let (base, loopback) = try RecordCommand.upstreamBase(service.base)
        try RecordCommand.makeFolder(record, option: "--record")
        let recorder = ExchangeRecorder(
            folder: record, mask: CredentialMask(), announces: false,
            note: "Recorded by sharelane conformance \(SharelaneVersion.current) against \(service.kind).")
        let proxy = ForwardingProxy(upstream: base, keepsHost: loopback, recorder: recorder, logger: logger)
        let outcomes = try await LoopbackService.with(
            "the recording proxy", logger: logger,
            make: { running in
                RecordCommand.proxyApplication(proxy, host: "127.0.0.1", port: 0, logger: logger, onRunning: running)
            }
        ) { port in try await Self.run(run, base: "http://127.0.0.1:\(port)", progress: progress) }
        return (outcomes, await recorder.count)
    }

    /// Runs the checks against `base`; every token an answer hands out is masked in what the command writes.
    static func run(
        _ run: ConformanceRun, base: String, progress: @escaping @Sendable (ConformanceRun.Outcome) -> Void
    ) async throws -> [ConformanceRun.Outcome] {
        do {
            return try await run.run(
                send: { request in
                    let answer = try await ReplayCommand.send(request, to: base)
                    SecretMask.register(answer.headers[CredentialMask.webAuthTokenHeader])
                    SecretMask.register(answer.body.jsonValue?["ckWebAuthToken"]?.stringValue)
                    return answer
                }, progress: progress)
        } catch {
            throw CommandFailure.store("the service stopped answering: \(error); start the server, or check --store")
        }
    }

    /// One outcome's line: `passed`, `failed` with each problem, or `skipped` with why.
    static func line(_ outcome: ConformanceRun.Outcome) -> String {
        if let skipped = outcome.skipped { return "skipped  \(outcome.check): \(skipped)" }
        if outcome.passed { return "passed   \(outcome.check)" }
        return "failed   \(outcome.check): " + outcome.problems.joined(separator: "; ")
    }

    static func json(_ outcome: ConformanceRun.Outcome) -> JSONValue {
        var object: [String: JSONValue] = [
            "check": .string(outcome.check), "passed": .bool(outcome.passed),
            "problems": .array(outcome.problems.map(JSONValue.string)),
        ]
        if let skipped = outcome.skipped { object["skipped"] = .string(skipped) }
        return .object(object)
    }
}
