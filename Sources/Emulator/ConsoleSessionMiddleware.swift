import CloudKitWire
import HTTPTypes
import Hummingbird
import HummingbirdCore

/// Lets a console page through only with a live session, and puts the session's form check where the page's
/// sign-out form finds it (`ConsoleSessions.formCheck`).
///
/// A page asked for with `?ckAPIToken=…` (as Web Services requests carry it) starts no session: a GET changes
/// nothing. It is answered `401` with a page that posts the token to the sign-in form's address and takes the
/// token out of the address it shows, so that Back never returns to it; a wrong token is refused. The address
/// the person opened stays in the browser's history, which no answer can change; the sign-in form keeps the
/// token out of every address. Without a session, a page answers the sign-in form with 401.
struct ConsoleSessionMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext

    let configuration: EmulatorConfiguration
    let sessions: ConsoleSessions

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let place = Console.safeNext(Self.withoutToken(request.uri)[...])
        if let given = request.uri.queryParameters[WireSpelling.apiTokenParameter[...]] {
            guard configuration.acceptsAPIToken(String(given)) else {
                return ConsolePage.response(
                    ConsolePage.signIn(next: place, message: "That is not this emulator's API token."),
                    status: .unauthorized)
            }
            return ConsolePage.postingSignIn(token: String(given), next: place)
        }
        guard let check = await sessions.formCheck(of: request.cookies[ConsoleSessions.cookieName]?.value) else {
            return ConsolePage.response(ConsolePage.signIn(next: place, message: nil), status: .unauthorized)
        }
        return try await ConsoleSessions.$formCheck.withValue(check) { try await next(request, context) }
    }

    /// The request's path and query with `ckAPIToken` taken out (the rest kept as it was written), and the path
    /// begun with a single `/`: a request for `//access` is a page of this server, never `//access` (another
    /// host, to a browser).
    static func withoutToken(_ uri: URI) -> String {
        let kept = (uri.query ?? "").split(separator: "&").filter { item in
            item != WireSpelling.apiTokenParameter && !item.hasPrefix(WireSpelling.apiTokenParameter + "=")
        }
        let path = "/" + uri.path.drop { $0 == "/" || $0 == "\\" }
        return path + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
    }
}
