import AsyncHTTPClient
import CloudKitWire
import Emulator
import Foundation
import Logging
import NIOCore
import Recipe
import ShareKit
import ShareStoreSQLite
import SharelaneTestSupport

/// Runs `sharelane serve`'s emulator in this process on a free loopback port, over a SQLite store file.
enum EmulatorHarness {
    static let apiToken = "test-api-token+/="
    static let container = "iCloud.local.sharelane"
    static let environment = "development"
    static let quiet = Logger(label: "sharelane.test") { _ in SwiftLogNoOpLogHandler() }

    /// Starts the emulator over the SQLite file at `storePath` (a fresh one in a temporary directory, removed
    /// afterwards, when nil), runs `body` with its base URL, then stops it. `networkConditions` is the network
    /// it plays from the start (`serve --latency/--throttle/--faults`); `logger` gets its request log.
    static func withEmulator<T: Sendable>(
        storePath: String? = nil, tokenLifetime: Duration = .seconds(3600), maxBodyBytes: Int = 16 << 20,
        clock: EmulatorClock = .system, strictTokens: Bool = false, serverKeys: ServerKeyring = ServerKeyring(),
        opaqueChecksums: Bool = false, allowedOrigins: [String] = [], allowedHosts: [String] = [],
        networkConditions: NetworkConditions = .none, logger: Logger = quiet,
        _ body: @Sendable (String) async throws -> T
    ) async throws -> T {
        try await TemporaryDirectory.with("emulator") { scratch in
            let store = try SQLiteStore(path: storePath ?? scratch.file("serve.sqlite"), logger: quiet)
            var configuration = EmulatorConfiguration(
                apiToken: apiToken, tokenLifetime: tokenLifetime, maxBodyBytes: maxBodyBytes, clock: clock,
                strictTokens: strictTokens, serverKeys: serverKeys, opaqueChecksums: opaqueChecksums,
                allowedOrigins: allowedOrigins, networkConditions: networkConditions)
            configuration.allowedHosts = allowedHosts
            return try await InProcessEmulator.with(store: store, configuration: configuration, logger: logger, body)
        }
    }

    /// The HTTP store that the CLI makes for `--store http://…`.
    static func store(_ baseURL: String, parallelism: Int = WebServicesStore.defaultParallelism) -> WebServicesStore {
        WebServicesStore(
            endpoint: .emulator(url: baseURL, apiToken: apiToken, container: container, environment: environment),
            retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0.01, maxDelay: 0.05), parallelism: parallelism,
            logger: quiet)
    }

    /// The HTTP store for a bad network: the CLI's wait budget with short backoffs and twice its attempts (the
    /// tests' fault rates are high, so that every fault is met), waiting out `retryAfter` on `clock` (a test's,
    /// also the emulator's, so that whole seconds cost nothing), with at most `parallelism` requests on the wire.
    static func store(_ baseURL: String, retryClock: RetryClock, parallelism: Int) -> WebServicesStore {
        WebServicesStore(
            endpoint: .emulator(url: baseURL, apiToken: apiToken, container: container, environment: environment),
            retryPolicy: RetryPolicy(maxAttempts: 12, baseDelay: 0.01, maxDelay: 0.05), parallelism: parallelism,
            retryClock: retryClock, logger: quiet)
    }

    /// The HTTP store that the CLI makes for `--store http://…` when it plans `recipe`: the recipe's
    /// container and environment, and the default retry policy.
    static func store(_ baseURL: String, for recipe: Recipe) -> WebServicesStore {
        WebServicesStore(
            endpoint: .emulator(
                url: baseURL, apiToken: apiToken, container: recipe.container, environment: recipe.environment.rawValue),
            logger: quiet)
    }

    /// A raw HTTP answer.
    struct Answer {
        var status: Int
        var json: [String: Any]
        var nextToken: String?
        var text: String
        /// The `Location` of a redirect.
        var location: String?
        /// Every header of the answer, by lowercased name (the last value of a repeated one).
        var headers: [String: String] = [:]
    }

    /// A client that does not follow redirects, so that a test sees where the sign-in page sends the browser.
    static let nonFollowingClient: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Sends a raw request, as a client written from Apple's documentation would.
    static func raw(
        _ baseURL: String, _ path: String, query: [String: String] = [:], body: String? = nil, method: String = "POST",
        headers: [(name: String, value: String)] = [], contentType: String = "application/json"
    ) async throws -> Answer {
        var components = URLComponents(string: baseURL + path)
        components?.percentEncodedQueryItems = query.sorted { $0.key < $1.key }.map {
            URLQueryItem(name: $0.key, value: percentEncoded($0.value))
        }
        guard let url = components?.url?.absoluteString else { throw ShareError(.badRequest, "bad test URL") }
        var request = HTTPClientRequest(url: url)
        request.method = .init(rawValue: method)
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(string: body))
        }
        for header in headers { request.headers.add(name: header.name, value: header.value) }
        let response = try await nonFollowingClient.execute(
            request, timeout: .seconds(TestDeadlines.httpRead.components.seconds))
        let buffer = try await response.body.collect(upTo: 64 << 20)
        let data = Data(buffer.readableBytesView)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return Answer(
            status: Int(response.status.code), json: json,
            nextToken: response.headers.first(name: WireSpelling.webAuthTokenHeader),
            text: String(decoding: data, as: UTF8.self), location: response.headers.first(name: "Location"),
            headers: Dictionary(response.headers.map { ($0.name.lowercased(), $0.value) }) { _, last in last })
    }

    /// Signs in over raw HTTP: the first web auth token and the user record name.
    static func signIn(_ baseURL: String, _ email: String, apiToken: String = apiToken) async throws -> (
        token: String, user: String
    ) {
        let answer = try await raw(
            baseURL, "/auth/signin", query: ["ckAPIToken": apiToken], body: #"{"emailAddress":"\#(email)"}"#)
        guard let token = answer.json["ckWebAuthToken"] as? String, let user = answer.json["userRecordName"] as? String
        else {
            throw ShareError(.internalError, "sign-in failed: \(answer.status) \(answer.text)")
        }
        return (token, user)
    }

    static func databasePath(_ database: String, _ operation: String) -> String {
        "/database/1/\(container)/\(environment)/\(database)/\(operation)"
    }

    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
