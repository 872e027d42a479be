import ArgumentParser
import Logging
import Recipe
import ShareKit

/// `--store URL`, shared by every command that reads or writes a store.
public struct StoreOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store: sqlite:PATH (or a bare path), memory:, http://HOST:PORT or cloudkit:.",
            discussion: "Defaults to $SHARELANE_STORE, then to sqlite:.sharelane/store.sqlite.",
            valueName: "url"))
    public var store: String?

    @Option(
        name: .customLong("api-token"),
        help: ArgumentHelp(
            "The API token for http: and cloudkit: stores.", discussion: "Defaults to $CLOUDKIT_API_TOKEN.",
            valueName: "token"))
    public var apiToken: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How long an http: or cloudkit: store keeps trying to reach the service (e.g. 30s, 2m).",
            discussion: "Connections that are refused or not answered are retried with backoff; default 8s.",
            valueName: "duration"))
    var timeout: TimeLimit?

    public init() {}

    /// The store URL in effect.
    public var url: String { StoreLocator.effectiveURL(option: store) }

    /// Opens the store for a recipe's container and environment (`http:` and `cloudkit:` address them), or,
    /// without a recipe, for the default container's development environment: how every command opens it.
    /// - Throws: `CLIFailure` naming the store and why it cannot be opened.
    func open(for recipe: Recipe?, environment: CloudKitEnvironment? = nil, logger: Logger) throws -> any Store {
        SecretMask.register(apiToken)
        do {
            return try StoreLocator.open(
                url, logger: logger, container: recipe?.container ?? Recipe.defaultContainer,
                environment: (environment ?? recipe?.environment ?? .development).rawValue,
                apiToken: apiToken, reachTimeout: timeout?.seconds)
        } catch {
            throw CLIFailure("cannot open the store \(url): \(error)")
        }
    }
}
