import CloudKitWire
import Hummingbird
import Logging
import ShareKit

/// `sharelane serve`: a local CloudKit Web Services over any `Store`.
///
/// Routes live under Apple's paths, `/database/1/{container}/{environment}/{database}/{operation}`, plus
/// `POST /auth/signin`. Every request needs `ckAPIToken`; database requests also need a `ckWebAuthToken`
/// that this emulator issued. A token is good for one request; every answer carries the next one in the
/// `X-Apple-CloudKit-Web-Auth-Token` header, where CloudKit JS reads it. Any container and environment are
/// accepted: they all reach the one store.
public struct CloudKitEmulator: Sendable {
    let service: EmulatorService

    /// - Parameters:
    ///   - store: the data and the access rules; the emulator adds none of its own.
    ///   - logger: one `info` line per request (method, path, status, user, time), never a token.
    public init(store: any Store, configuration: EmulatorConfiguration, logger: Logger) {
        service = EmulatorService(
            store: store, configuration: configuration, tokens: TokenIssuer(lifetime: configuration.tokenLifetime),
            logger: logger)
    }

    /// The server as a Hummingbird application; `onRunning` gets the bound port (useful with port 0).
    public func application(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let router = Router(context: BasicRequestContext.self)
        let service = self.service
        router.post(RouterPath(WireSpelling.signInPath)) { request, _ in await service.signIn(request) }
        let prefix = "\(WireSpelling.databasePathPrefix)/:container/:environment/:database"
        for operation in EmulatorService.operations {
            let path = RouterPath("\(prefix)/\(operation)")
            router.post(path) { request, context in
                await service.handle(request, context: context, operation: operation)
            }
            if operation == "zones/list" || operation == "users/current" {
                router.get(path) { request, context in
                    await service.handle(request, context: context, operation: operation)
                }
            }
        }
        router.post("/database/**") { request, _ in service.unknownOperation(request) }
        router.get("/database/**") { request, _ in service.unknownOperation(request) }
        let configuration = service.configuration
        return Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "sharelane-serve"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? configuration.port) },
            logger: service.logger)
    }

    /// Runs until SIGINT or SIGTERM, then finishes the requests in flight and returns.
    /// - Throws: when the address cannot be bound.
    public func run(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        try await application(onRunning: onRunning).runService()
    }
}
