import ArgumentParser
import CloudKitWire
import Foundation
import Logging
import PlanModel
import Planner
import Recipe
import ShareKit
import ShareStoreSQLite

/// Turns a store URL (`--store`, `SHARELANE_STORE`, or the default) into a `Store`.
///
/// | URL | store |
/// |---|---|
/// | `sqlite:PATH`, or a bare path | the embedded SQLite store in that file |
/// | (nothing) | `.sharelane/store.sqlite` in the working directory |
/// | `memory:` | the embedded store in memory |
/// | `http://HOST:PORT` | a running `sharelane serve`, over CloudKit Web Services |
/// | `cloudkit:`, `cloudkit:CONTAINER[/ENVIRONMENT]` | Apple's CloudKit Web Services for the recipe's container (or the one named), credentials from the environment (Docs/CloudKit.md) |
public enum StoreLocator {
    /// The store file used when neither `--store` nor `SHARELANE_STORE` names one.
    public static let defaultPath = ".sharelane/store.sqlite"

    /// The environment variable that names the store when `--store` is not given.
    public static let environmentVariable = "SHARELANE_STORE"

    /// What a store URL names.
    public enum Location: Equatable, Sendable {
        case sqlite(path: String)
        case memory
        case http(URL)
        /// `cloudkit:`, or `cloudkit:CONTAINER[/ENVIRONMENT]` naming the container (and environment) instead
        /// of the recipe's.
        case cloudKit(container: String?, environment: String?)
    }

    /// The store URL in effect: the option, else the environment variable, else the default path.
    public static func effectiveURL(
        option: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    )
        -> String
    {
        if let option, !option.isEmpty { return option }
        if let value = environment[environmentVariable], !value.isEmpty { return value }
        return "sqlite:" + defaultPath
    }

    /// Parses a store URL.
    /// - Throws: `StoreLocatorError.unknownScheme` for a scheme sharelane does not know.
    public static func location(of url: String) throws -> Location {
        if url == "memory:" { return .memory }
        // A store's scheme without its colon would otherwise be a file of that name in this folder: `--store
        // cloudkit` made a SQLite file named `cloudkit` and planned against it as an empty store.
        if ["cloudkit", "memory", "sqlite", "http", "https"].contains(url.lowercased()) {
            throw StoreLocatorError.schemeWithoutColon(url)
        }
        if let host = URL(string: url)?.host?.lowercased(), url.hasPrefix("https://"),
            host == "api.apple-cloudkit.com" || host.hasSuffix(".apple-cloudkit.com")
        {
            throw StoreLocatorError.applesService(url)
        }
        if url.hasPrefix("sqlite:") {
            var path = String(url.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
            guard !path.isEmpty else { throw StoreLocatorError.emptyPath(url) }
            return .sqlite(path: path)
        }
        if url.hasPrefix("http://") || url.hasPrefix("https://") {
            guard let parsed = URL(string: url), parsed.host != nil else { throw StoreLocatorError.badURL(url) }
            return .http(parsed)
        }
        if url.hasPrefix("cloudkit:") {
            let rest = url.dropFirst("cloudkit:".count)
            guard !rest.isEmpty else { return .cloudKit(container: nil, environment: nil) }
            let parts = rest.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard parts.count <= 2, !parts[0].isEmpty,
                parts.count == 1 || CloudKitEnvironment(rawValue: parts[1]) != nil
            else { throw StoreLocatorError.badCloudKit(url) }
            return .cloudKit(container: parts[0], environment: parts.count == 2 ? parts[1] : nil)
        }
        if let colon = url.firstIndex(of: ":"), !url.hasPrefix("/"), !url.hasPrefix("."),
            url[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }),
            url.distance(from: url.startIndex, to: colon) > 1
        {
            throw StoreLocatorError.unknownScheme(url)
        }
        return .sqlite(path: url)
    }

    /// What identifies the store a URL names, which a saved plan keeps (`SavedPlanStore`): a SQLite file by its
    /// absolute path and its identity on its file system, a serve by its URL, container and environment,
    /// `cloudkit:` by its container and environment.
    /// - Parameters:
    ///   - container: the plan's container (the recipe's), which `cloudkit:CONTAINER` overrides.
    ///   - environment: the plan's environment, which `cloudkit:CONTAINER/ENVIRONMENT` overrides.
    /// - Throws: `StoreLocatorError` for a URL sharelane cannot use.
    public static func identity(of url: String, container: String?, environment: String?) throws -> SavedPlanStore {
        switch try location(of: url) {
        case .sqlite(let path):
            let absolute = resolvedPath(path)
            var status = stat()
            let file = stat(absolute, &status) == 0 ? "\(status.st_dev):\(status.st_ino)" : nil
            return SavedPlanStore(kind: .sqlite, path: absolute, file: file)
        case .memory:
            return SavedPlanStore(kind: .memory)
        case .http:
            var base = url
            while base.hasSuffix("/") { base.removeLast() }
            return SavedPlanStore(
                kind: .http, url: base, container: container ?? defaultContainer,
                environment: environment ?? CloudKitEnvironment.development.rawValue)
        case .cloudKit(let named, let namedEnvironment):
            return SavedPlanStore(
                kind: .cloudkit, container: named ?? container,
                environment: namedEnvironment ?? environment ?? CloudKitEnvironment.development.rawValue)
        }
    }

    /// `path` made absolute from the working directory, its symbolic links resolved (the folder's alone when
    /// the file is not made yet), so that one file is one path however it is named.
    private static func resolvedPath(_ path: String) -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        func real(_ path: String) -> String? {
            guard let resolved = realpath(path, nil) else { return nil }
            defer { free(resolved) }
            return String(cString: resolved)
        }
        if let file = real(absolute) { return file }
        let url = URL(fileURLWithPath: absolute)
        guard let folder = real(url.deletingLastPathComponent().path) else { return absolute }
        return URL(fileURLWithPath: folder).appendingPathComponent(url.lastPathComponent).path
    }

    /// The container a recipe uses when it names none.
    public static let defaultContainer = Recipe.defaultContainer

    /// Opens the store a URL names.
    ///
    /// - Parameters:
    ///   - container: the CloudKit container (the recipe's `container:`); nil when nothing names one: a local
    ///     store then opens the container its file holds (`StoreWorlds`), `http:` the default one.
    ///   - environment: `development` or `production` (the recipe's `environment:`).
    ///   - apiToken: `--api-token`; otherwise `CLOUDKIT_API_TOKEN`.
    /// - Throws: `StoreLocatorError` for a URL sharelane cannot use, `ShareError` when the store cannot open.
    public static func open(
        _ url: String, logger: Logger, container named: String? = nil, environment: String = "development",
        apiToken: String? = nil, environmentVariables: [String: String] = ProcessInfo.processInfo.environment,
        reachTimeout: Double? = nil, parallelism: Int = Parallelism.default, webAuthEmail: String? = nil,
        otherWebAuthTokens: [String: String] = [:]
    ) throws -> any Store {
        let container = named ?? defaultContainer
        switch try location(of: url) {
        case .sqlite(let path):
            if let refusal = StoreFile.refusal(at: path, url: url) { throw StoreLocatorError.notAStore(refusal) }
            return try EmbeddedStore.open(
                path: path, container: named,
                environment: CloudKitEnvironment(rawValue: environment) ?? .development, logger: logger)
        case .memory:
            return try EmbeddedStore.inMemory(
                container: container, environment: CloudKitEnvironment(rawValue: environment) ?? .development,
                logger: logger)
        case .http:
            let token = apiToken ?? environmentVariables[Credentials.apiTokenVariable].flatMap { $0.isEmpty ? nil : $0 }
            guard let token else { throw StoreLocatorError.missingAPIToken(url) }
            var base = url
            while base.hasSuffix("/") { base.removeLast() }
            return WebServicesClient.store(
                endpoint: .emulator(url: base, apiToken: token, container: container, environment: environment),
                reachTimeout: reachTimeout, parallelism: parallelism, logger: logger)
        case .cloudKit(let named, let namedEnvironment):
            // Never a silent default: Apple's containers are the developer's own.
            guard let chosen = named ?? (container == defaultContainer ? nil : container) else {
                throw StoreLocatorError.noContainer(url)
            }
            var variables = environmentVariables
            if let apiToken { variables[Credentials.apiTokenVariable] = apiToken }
            var endpoint = try WebServicesEndpoint.cloudKit(
                environmentVariables: variables, container: chosen,
                environment: namedEnvironment ?? environment)
            endpoint.webAuthEmail = webAuthEmail
            endpoint.otherWebAuthTokens = otherWebAuthTokens
            return WebServicesClient.store(
                endpoint: endpoint, reachTimeout: reachTimeout, parallelism: parallelism, logger: logger)
        }
    }
}

/// A store URL sharelane cannot use.
public enum StoreLocatorError: Error, CustomStringConvertible, Equatable {
    case unknownScheme(String)
    case emptyPath(String)
    case badURL(String)
    case notYetSupported(String, String)
    case missingAPIToken(String)
    case badCloudKit(String)
    case noContainer(String)
    case schemeWithoutColon(String)
    case applesService(String)
    case notAStore(String)

    public var description: String {
        switch self {
        case .unknownScheme(let url):
            "unknown store '\(url)': use sqlite:PATH (or a bare path), memory:, http://HOST:PORT or cloudkit:"
        case .emptyPath(let url):
            "the store '\(url)' names no file: write sqlite:PATH, e.g. sqlite:.sharelane/store.sqlite"
        case .badURL(let url): "the store URL '\(url)' is not a valid http URL: write http://HOST:PORT"
        case .badCloudKit(let url):
            "the store '\(url)' is not cloudkit:, cloudkit:CONTAINER or cloudkit:CONTAINER/ENVIRONMENT "
                + "(development or production), e.g. cloudkit:iCloud.com.example.App/development"
        case .noContainer(let url):
            "the store '\(url)' names no CloudKit container, and no recipe names one (container:): write "
                + "cloudkit:CONTAINER, e.g. cloudkit:iCloud.com.example.App, or give a recipe with container:"
        case .missingAPIToken(let url):
            "the store \(url) needs the API token that `sharelane serve` printed when it started: set "
                + "CLOUDKIT_API_TOKEN or pass --api-token"
        case .schemeWithoutColon(let word):
            "--store \(word) names no store: did you mean `\(word.lowercased()):`? (a file of that name would be "
                + "written ./\(word) or sqlite:\(word))"
        case .applesService(let url):
            "\(url) is Apple's CloudKit service: write --store cloudkit: (or cloudkit:CONTAINER), which signs in "
                + "as Apple's service expects (Docs/CloudKit.md); http:// and https:// stores are `sharelane serve`"
        case .notAStore(let reason):
            reason
        case .notYetSupported(let url, let what):
            "\(what) is not supported by this build yet ('\(url)'); use sqlite:PATH or memory: for now"
        }
    }
}
