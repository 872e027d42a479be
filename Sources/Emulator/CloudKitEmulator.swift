import CloudKitWire
import Hummingbird
import Logging
import ShareKit

/// `sharelane serve`: a local CloudKit Web Services over any `Store`.
///
/// Routes live under Apple's paths, `/database/1/{container}/{environment}/{database}/{operation}`, plus
/// `POST /auth/signin` (and, where a `redirectURL` leads, the sign-in page `GET /auth/signin`). Every request
/// needs `ckAPIToken` (or a server-to-server signature, public database only); the private and shared
/// databases and writes also need a `ckWebAuthToken` that this emulator issued. Every answer carries the
/// next token in the `X-Apple-CloudKit-Web-Auth-Token` header, where CloudKit JS reads it; older tokens stay
/// good until they expire (`strictTokens`: one request each). Any container and environment are
/// accepted, each a world of its own (`StoreWorlds`). Beside them, at `/`, a read-only web console (`Console`). Between
/// the emulator and its clients, a network as bad as asked (`NetworkFaultMiddleware`), changed while it runs
/// at `/_sharelane/faults`.
public struct CloudKitEmulator: Sendable {
    let service: EmulatorService
    let logger: Logger
    /// The console's sessions, one set for every router this emulator makes.
    let consoleSessions: ConsoleSessions
    /// The network conditions in force, for every router this emulator makes.
    let network: NetworkFaults

    /// - Parameters:
    ///   - worlds: the data, one store per container and environment, and the access rules; the emulator adds
    ///     none of its own.
    ///   - logger: one `info` line per request (method, path, status, user, time), never a token.
    public init(worlds: any StoreWorlds, configuration: EmulatorConfiguration, logger: Logger) {
        service = EmulatorService(
            worlds: worlds, configuration: configuration,
            tokens: TokenIssuer(
                lifetime: configuration.tokenLifetime, clock: configuration.clock, strict: configuration.strictTokens),
            tickets: SignInTickets(clock: configuration.clock),
            downloads: AssetDownloads(lifetime: configuration.assetDownloadLifetime, clock: configuration.clock))
        self.logger = logger
        consoleSessions = ConsoleSessions(lifetime: configuration.consoleSessionLifetime, clock: configuration.clock)
        network = NetworkFaults(configuration.networkConditions, clock: configuration.clock)
    }

    /// The store served, as messages name it (`sqlite:PATH`, `memory:`).
    public var displayName: String { service.worlds.displayName }

    /// The routes: sign-in, every operation of `WireOperation.all` under Apple's path, an answer naming
    /// them for any other path under `/database/`, the network conditions' endpoint, and the console's pages.
    func router() -> Router<EmulatorRequestContext> {
        let router = Router(context: EmulatorRequestContext.self)
        let service = self.service
        router.add(middleware: RequestLogMiddleware(logger: logger, history: service.requests))
        // A name rebound to this machine is refused before anything else, then a page of an origin not allowed.
        router.add(middleware: HostNameMiddleware(configuration: service.configuration))
        router.add(middleware: CrossOriginMiddleware(configuration: service.configuration))
        // Inside the CORS middleware, so that a page reads its 503 and 429 answers; before authentication, so
        // that a reset spends no token.
        router.add(middleware: NetworkFaultMiddleware(faults: network, tokens: service.tokens))
        router.group(RouterPath(WireSpelling.signInPath))
            .add(middleware: AuthenticationMiddleware(service: service, requiresWebAuthToken: false))
            .post { request, context in try await service.signIn(request, context: context) }
        router.group(RouterPath(WireSpelling.signInBatchPath))
            .add(middleware: AuthenticationMiddleware(service: service, requiresWebAuthToken: false))
            .post { request, context in try await service.signInBatch(request, context: context) }
        // Where a redirectURL leads: the sign-in page, and its form (EmulatorService+SignInPage).
        router.get(RouterPath(EmulatorService.signInPagePath)) { request, _ in await service.signInPage(request) }
        router.post(RouterPath(EmulatorService.signInFormPath)) { request, context in
            await service.signInForm(request, context: context)
        }
        let database = router.group(RouterPath("\(WireSpelling.databasePathPrefix)/:container/:environment/:database"))
            .add(middleware: AuthenticationMiddleware(service: service, requiresWebAuthToken: true))
        for operation in WireOperation.all where !Self.isTokenOperation(operation) {
            for method in operation.methods {
                database.on(RouterPath(operation.path), method: method == .get ? .get : .post) { request, context in
                    try await service.perform(operation, request, context: context)
                }
            }
        }
        registerNotificationRoutes(router, database: database)
        // Asset bytes: the upload URLs assets/upload hands out, and the downloadURLs of kept assets.
        router.post(RouterPath(WireAsset.uploadPath)) { request, context in
            try await service.uploadAsset(request, context: context)
        }
        router.get(RouterPath("\(WireAsset.downloadPathPrefix)/:checksum/:file")) { request, context in
            try await service.downloadAsset(request, context: context)
        }
        router.post("/database/**") { request, _ in try service.unknownOperation(request) }
        router.get("/database/**") { request, _ in try service.unknownOperation(request) }
        FixtureEndpoint(
            emulator: self, gate: LocalCallerGate(configuration: service.configuration, sessions: consoleSessions),
            logger: logger
        ).register(on: router)
        NetworkFaultsEndpoint(
            faults: network, configuration: service.configuration, sessions: consoleSessions, logger: logger
        ).register(on: router)
        Console(
            worlds: service.worlds, configuration: service.configuration, sessions: consoleSessions,
            containers: service.containers, network: network, requests: service.requests
        ).register(on: router)
        return router
    }

    /// The server as a Hummingbird application; `onRunning` gets the bound port (useful with port 0).
    public func application(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let configuration = service.configuration
        return Application(
            router: router(),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "sharelane-serve"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? configuration.port) },
            logger: logger)
    }

    /// Runs until SIGINT or SIGTERM, then finishes the requests in flight and returns.
    /// - Throws: when the address cannot be bound.
    public func run(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        try await application(onRunning: onRunning).runService()
    }
}
