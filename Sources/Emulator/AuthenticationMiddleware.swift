import CloudKitWire
import HTTPTypes
import Hummingbird
import ShareKit

/// Checks the API token of every request and, for database requests, redeems the single-use web auth
/// token: the request acts as its user (on the context), and the answer, refusals included, carries the
/// next token in the `X-Apple-CloudKit-Web-Auth-Token` header.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext

    /// The emulator's configuration: its API token, checked by `acceptsAPIToken` (the console asks the same).
    let configuration: EmulatorConfiguration
    let tokens: TokenIssuer
    /// false for the sign-in route, which needs only the API token.
    let requiresWebAuthToken: Bool

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        try checkAPIToken(request)
        guard requiresWebAuthToken else { return try await next(request, context) }
        let user = try await tokens.redeem(
            request.uri.queryParameters[WireSpelling.webAuthTokenParameter[...]].map(String.init))
        context.caller.user = user
        let nextToken = await tokens.issue(for: user)
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            response = try ShareError.answering(error).response(from: request, context: context)
        }
        if let name = HTTPField.Name(WireSpelling.webAuthTokenHeader) { response.headers[name] = nextToken }
        return response
    }

    private func checkAPIToken(_ request: Request) throws {
        let given = request.uri.queryParameters[WireSpelling.apiTokenParameter[...]].map(String.init)
        guard let given, !given.isEmpty else {
            throw ShareError(.authenticationFailed, "this request needs the emulator's API token as ckAPIToken")
        }
        guard configuration.acceptsAPIToken(given) else {
            throw ShareError(
                .authenticationFailed,
                "the ckAPIToken is not this emulator's API token (printed when `sharelane serve` starts)")
        }
    }
}
