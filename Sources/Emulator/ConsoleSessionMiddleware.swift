import CloudKitWire
import HTTPTypes
import Hummingbird
import HummingbirdCore

/// Lets a console page through only with a live session; takes the API token once to start one.
///
/// A request with `?ckAPIToken=…` (as Web Services requests carry it) that gives the emulator's token starts
/// a session and is sent back to the same page without the token, so the token leaves the address bar and the
/// browser's history; a wrong token is refused. Without a session, a page answers the sign-in form with 401.
struct ConsoleSessionMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext

    let configuration: EmulatorConfiguration
    let sessions: ConsoleSessions

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let place = Self.withoutToken(request.uri)
        if let given = request.uri.queryParameters[WireSpelling.apiTokenParameter[...]] {
            guard configuration.acceptsAPIToken(String(given)) else {
                return ConsolePage.response(
                    ConsolePage.signIn(next: place, message: "That is not this emulator's API token."),
                    status: .unauthorized)
            }
            return await Console.startSession(sessions, goingTo: place)
        }
        guard await sessions.isLive(request.cookies[ConsoleSessions.cookieName]?.value) else {
            return ConsolePage.response(ConsolePage.signIn(next: place, message: nil), status: .unauthorized)
        }
        return try await next(request, context)
    }

    /// The request's path and query with `ckAPIToken` taken out (the rest kept as it was written).
    static func withoutToken(_ uri: URI) -> String {
        let kept = (uri.query ?? "").split(separator: "&").filter { item in
            item != WireSpelling.apiTokenParameter && !item.hasPrefix(WireSpelling.apiTokenParameter + "=")
        }
        return uri.path + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
    }
}
