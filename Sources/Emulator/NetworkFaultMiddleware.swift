import CloudKitWire
import HTTPTypes
import Hummingbird
import ShareKit

/// Plays a bad network between `sharelane serve` and its clients, as LocalStack's chaos API and Toxiproxy do
/// for other clouds: the conditions of `serve --latency/--throttle/--faults` or `POST /_sharelane/faults`
/// (`NetworkFaults`), on the CloudKit Web Services routes only (`/database/…`, `/device/…`, `POST
/// /auth/signin`, asset upload and download), never the console, the sign-in page or the faults endpoint.
///
/// Each request, in arrival order, draws its wait and its fault; it waits (suspended, no thread held), then:
/// - `reset`: the connection closes before the request is read; nothing is applied, nothing answered;
/// - `unavailable`: `503 TRY_AGAIN_LATER` with `retryAfter`, nothing applied;
/// - over the throttle: `429 THROTTLED` with `retryAfter`, nothing applied;
/// - `lost-answer`: the route runs (the store changes), then the connection closes before the answer is sent.
///
/// It runs before authentication, so that a reset or a refusal spends no web auth token (`--strict-tokens`).
/// The throttle counts each user apart: the user whose web auth token the request carries, whom
/// authentication then puts on the context (`TokenIssuer.holder(of:)` reads it without spending it); each
/// server-to-server key apart; and the requests without either by the page they come from (their `Origin`, or
/// none): sign-ins in one count, the rest (API-token-only reads of the public database, asset bytes) in
/// another.
struct NetworkFaultMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext

    let faults: NetworkFaults
    let tokens: TokenIssuer

    /// `retryAfter` of an `unavailable` answer, in seconds: CloudKit's smallest.
    static let unavailableRetryAfter = 1

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard Self.isWebServices(request), let draw = faults.draw() else { return try await next(request, context) }
        if draw.delay > .zero { try await faults.clock.sleep(draw.delay) }
        switch draw.fault {
        case .reset?:
            context.network.met = .reset
            await context.closeConnection()
            // Never sent: the connection is closed.
            return Response(status: .noContent)
        case .unavailable?:
            context.network.met = .unavailable
            throw ShareError(
                .tryAgainLater,
                "the service is unavailable for a moment (sharelane serve plays a bad network: --faults "
                    + "unavailable=…); nothing was applied: send the request again after retryAfter seconds",
                retryAfter: Double(Self.unavailableRetryAfter))
        case .lostAnswer?, nil:
            break
        }
        if draw.throttled, let wait = faults.admit(await caller(of: request)) {
            context.network.met = .throttled
            let rate = faults.throttle.map { "\($0.requests) requests a \($0.window == .second ? "second" : "minute")" }
            throw ShareError(
                .throttled,
                "this caller sent more than \(rate ?? "its share of requests") (sharelane serve --throttle); "
                    + "nothing was applied: send the request again after retryAfter seconds",
                retryAfter: Double(RequestWindows.retryAfterSeconds(wait)))
        }
        guard draw.fault == .lostAnswer else {
            context.network.met = .untouched
            return try await next(request, context)
        }
        context.network.met = .lostAnswer
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            await context.closeConnection()
            throw error
        }
        await context.closeConnection()
        // Never sent: the connection is closed; the log line gives its status.
        return response
    }

    /// Whom the throttle counts a request against.
    private func caller(of request: Request) async -> String {
        if let name = HTTPField.Name(WireSpelling.keyIDHeader), let keyID = request.headers[name] {
            return "key \(keyID)"
        }
        if let token = request.uri.queryParameters[WireSpelling.webAuthTokenParameter[...]], !token.isEmpty,
            let user = await tokens.holder(of: String(token))
        {
            return "user \(user)"
        }
        // Without a user: each page's origin apart, and sign-ins apart from the rest, so that a page's (or a
        // script's) tokenless requests never use up the count that the next real sign-in needs.
        let page = request.headers[.origin].flatMap(EmulatorConfiguration.origin(of:)) ?? "no page"
        let signIn = Self.isSignIn(request)
        return (signIn ? "sign-in from " : "anonymous from ") + page
    }

    private static let databasePrefix = WireSpelling.databasePathPrefix + "/"
    private static let devicePrefix = WireSpelling.devicePathPrefix + "/"
    private static let downloadPrefix = WireAsset.downloadPathPrefix + "/"

    /// Whether a request is one of CloudKit Web Services', which the network conditions apply to.
    static func isWebServices(_ request: Request) -> Bool {
        let path = request.uri.path
        return path.hasPrefix(databasePrefix) || path.hasPrefix(devicePrefix) || path.hasPrefix(downloadPrefix)
            || path == WireAsset.uploadPath || isSignIn(request)
    }

    /// A sign-in's `POST`, of one user or many (the sign-in page's `GET` and its form are not).
    private static func isSignIn(_ request: Request) -> Bool {
        request.method == .post
            && (request.uri.path == WireSpelling.signInPath || request.uri.path == WireSpelling.signInBatchPath)
    }
}
