import ArgumentParser
import CloudKitWire
import Crypto
import Foundation
import Logging
import Recipe
import ShareKit
import ShareStoreSQLite

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

    /// The world of an existing `sqlite:` store that a command would read and that the store does not hold
    /// yet: `container` (else the one the file holds first) in `environment`.
    func unmadeWorld(container: String?, environment: String, logger: Logger) -> (path: String, world: StoreWorld)? {
        // A file whose own world is not claimed yet (one written before containers were kept apart) is the
        // world of the first command that opens it, as Docs/CloudKit.md says.
        guard case .sqlite(let path)? = try? StoreLocator.location(of: url), StoreFile.kind(at: path) == .sharelane,
            let claimed = EmbeddedStore.claimedWorlds(path: path, logger: logger)
        else { return nil }
        let known = claimed.worlds
        let world = StoreWorld(
            container: container ?? claimed.home.container,
            environment: CloudKitEnvironment(rawValue: environment) ?? .development)
        return known.contains(world) ? nil : (path, world)
    }

    /// The path of a `sqlite:` store whose file does not exist yet, if that is the store.
    var notYetMadePath: String? {
        // Existence alone: what the file holds is read once, where the store is opened.
        guard case .sqlite(let path)? = try? StoreLocator.location(of: url),
            !FileManager.default.fileExists(atPath: path)
        else { return nil }
        return path
    }

    /// Opens the store for a recipe's container and environment (`http:` and `cloudkit:` address them), or,
    /// without a recipe, for the default container's development environment: how every command opens it.
    ///
    /// An `http:` or `cloudkit:` store without a token in the environment (or `--api-token`) takes the one
    /// `sharelane login` saved (`TokenStore`), and the newest token it is handed is saved back when the
    /// command ends (`TokenKeeper`).
    /// - Throws: `CommandFailure` naming the store and why it cannot be opened.
    /// - Parameter container: the container when there is no recipe to say (a saved plan's).
    /// - Parameter parallelism: the most requests an `http:` or `cloudkit:` store has on the wire at once
    ///   (`--parallelism`).
    /// - Parameter reading: whether the command only reads: a `sqlite:` file that does not exist yet is then
    ///   read as an empty store, and not made (a plan changes nothing, not even the file system).
    func open(
        for recipe: Recipe?, container named: String? = nil, environment: CloudKitEnvironment? = nil,
        parallelism: Int = Parallelism.default, reading: Bool = false, logger: Logger
    ) throws -> any Store {
        SecretMask.register(apiToken)
        let url = self.url
        // `--container` (or a saved plan's) wins over the recipe's.
        let container = named ?? recipe?.container ?? Recipe.defaultContainer
        // Nothing names a container: a local store opens the one its file holds.
        let namedContainer = named ?? recipe?.container
        let environmentName = (environment ?? recipe?.environment ?? .development).rawValue
        var variables = ProcessInfo.processInfo.environment
        var apiToken = self.apiToken
        var saved: (TokenStore.Entry, TokenStore)?
        // cloudkit: the signed-in user's address when the token is the file's, and the other users the file
        // holds a token of (a recipe's other owners, each of their own `sharelane login --as`).
        var webAuthEmail: String?
        var others: [TokenStore.Entry] = []
        do {
            if let key = try Self.tokenKey(
                url: url, container: container, environment: environmentName, variables: variables)
            {
                let file = TokenStore.standard
                if let entry = try file.find(store: key.store, environment: key.environment) {
                    func unset(_ name: String) -> Bool { (variables[name] ?? "").isEmpty }
                    if apiToken == nil, unset(Credentials.apiTokenVariable), let stored = entry.apiToken {
                        apiToken = stored
                        SecretMask.register(stored)
                    }
                    if key.isCloudKit, unset("CLOUDKIT_WEB_AUTH_TOKEN") {
                        variables["CLOUDKIT_WEB_AUTH_TOKEN"] = entry.webAuthToken
                        webAuthEmail = entry.email
                    }
                    SecretMask.register(entry.webAuthToken)
                    saved = (entry, file)
                    if key.isCloudKit {
                        let signedIn = variables["CLOUDKIT_WEB_AUTH_TOKEN"]
                        others = try file.load().filter {
                            $0.store == key.store && $0.environment == key.environment && $0.email != nil
                                && $0.webAuthToken != signedIn
                                && $0.email.map(EmailAddress.normalized) != webAuthEmail.map(EmailAddress.normalized)
                        }
                        for other in others { SecretMask.register(other.webAuthToken) }
                    }
                }
            }
            let store: any Store
            if reading, let world = unmadeWorld(container: namedContainer, environment: environmentName, logger: logger)
            {
                // A world of the store that does not exist yet reads as empty, and is not made by reading it.
                store = try StoreFile.notYetMade(
                    path: world.path, container: world.world.container, environment: world.world.environment,
                    logger: logger)
            } else if reading, let path = notYetMadePath {
                Terminal.printError(
                    "note: \(url) does not exist yet: read as an empty store, and not made (an apply makes it)")
                store = try StoreFile.notYetMade(
                    path: path, container: namedContainer,
                    environment: CloudKitEnvironment(rawValue: environmentName) ?? .development, logger: logger)
            } else {
                store = try StoreLocator.open(
                    url, logger: logger, container: namedContainer, environment: environmentName, apiToken: apiToken,
                    environmentVariables: variables, reachTimeout: timeout?.seconds, parallelism: parallelism,
                    webAuthEmail: webAuthEmail,
                    otherWebAuthTokens: Dictionary(
                        others.compactMap { entry in entry.email.map { ($0, entry.webAuthToken) } },
                        uniquingKeysWith: { first, _ in first }))
            }
            if let saved, let web = store as? any KeepsWebAuthTokens {
                TokenKeeper.track(web, entry: saved.0, file: saved.1)
                for other in others { TokenKeeper.track(web, entry: other, file: saved.1, other: true) }
            }
            if let web = store as? any ServiceStore {
                // Asset checksums the client cannot compute, with the digests of their bytes (Docs/CloudKit.md,
                // "Assets"), kept beside the plan caches.
                web.assetContents.use(file: Self.assetDigestFile(for: web.endpoint))
            }
            return store
        } catch let failure as CommandFailure {
            throw failure
        } catch let refusal as StoreLocatorError {
            // Each of these names the store and says what to write instead.
            throw CommandFailure.input(refusal.description)
        } catch {
            throw CommandFailure.store("cannot open the store '\(url)': \(error)")
        }
    }

    /// The file of an `http:` or `cloudkit:` store's asset checksums and the digests of their bytes
    /// (`AssetContentDigests`): `asset-digests/` beside `plan-cache/` in the user's cache directory, one file
    /// per service, container and environment.
    static func assetDigestFile(for endpoint: WebServicesEndpoint) -> URL {
        let key = [TokenKeeper.key(for: endpoint), endpoint.container, endpoint.environment].joined(separator: "\u{0}")
        let digest = SHA256.hash(data: Data(key.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
        return RefreshOptions.userCacheDirectory().appendingPathComponent("asset-digests")
            .appendingPathComponent("\(digest).json")
    }

    /// Where the token file keeps the tokens of an `http:` or `cloudkit:` store; nil for a local store.
    /// - Throws: `StoreLocatorError` for a URL sharelane cannot use.
    static func tokenKey(url: String, container: String, environment: String, variables: [String: String]) throws
        -> (store: String, environment: String, isCloudKit: Bool)?
    {
        switch try StoreLocator.location(of: url) {
        case .sqlite, .memory:
            return nil
        case .http:
            let endpoint = WebServicesEndpoint.emulator(
                url: url, apiToken: nil, container: container, environment: environment)
            return (TokenKeeper.key(for: endpoint), environment, false)
        case .cloudKit(let named, let namedEnvironment):
            let base =
                variables["CLOUDKIT_BASE_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? WebServicesEndpoint.appleBaseURL
            let endpoint = WebServicesEndpoint(
                kind: .cloudKit, baseURL: base, container: named ?? container,
                environment: namedEnvironment ?? environment, apiToken: nil)
            return (TokenKeeper.key(for: endpoint), endpoint.environment, true)
        }
    }
}
