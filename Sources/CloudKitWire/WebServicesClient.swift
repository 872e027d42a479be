import AsyncHTTPClient
import Logging
import ShareKit

/// Makes the stores that reach CloudKit Web Services, and holds what every such client shares: the command
/// line opens `http:` and `cloudkit:` stores here, by capability, never by their type.
public enum WebServicesClient {
    /// How long a request keeps trying to reach a service that refuses or does not answer connections, by
    /// default.
    public static var defaultReachTimeout: Double { WebServicesStore.defaultReachTimeout }

    /// The client every store uses unless given one: each connection tried once, for at most 2 s.
    public static var failFastClient: HTTPClient { WebServicesStore.failFastClient }

    /// The connections the client keeps to one host.
    public static var maxConnectionsPerHost: Int { WebServicesStore.maxConnectionsPerHost }

    /// A store over the service at `endpoint`.
    /// - Parameters:
    ///   - reachTimeout: seconds a request keeps trying to connect (`--timeout`); nil for the default.
    ///   - parallelism: the most requests on the wire at once (`--parallelism`).
    public static func store(
        endpoint: WebServicesEndpoint, reachTimeout: Double? = nil, parallelism: Int = Parallelism.default,
        logger: Logger
    ) -> any ServiceStore {
        WebServicesStore(
            endpoint: endpoint, reachTimeout: reachTimeout ?? defaultReachTimeout, parallelism: parallelism,
            logger: logger)
    }
}
