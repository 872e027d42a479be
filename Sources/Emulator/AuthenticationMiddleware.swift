import CloudKitWire
import Foundation
import HTTPTypes
import Hummingbird
import ShareKit

/// Authenticates every request as CloudKit does, and puts the caller on the context:
/// - with the API token and a web auth token: the token's user; the answer, refusals included, carries the
///   next token in the `X-Apple-CloudKit-Web-Auth-Token` header (strict tokens are spent on use);
/// - with the API token alone: `AccessRules.unauthenticatedCaller`, whom the store's access rules let read
///   the public database and nothing else;
/// - signed with a server-to-server key (`serve --server-key`), no API token: the key's caller, public
///   database only.
/// A refusal with `AUTHENTICATION_REQUIRED` carries a `redirectURL` to the emulator's sign-in page.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext

    let service: EmulatorService
    /// false for the sign-in route, which needs only the API token.
    let requiresWebAuthToken: Bool

    var configuration: EmulatorConfiguration { service.configuration }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard requiresWebAuthToken else {
            try checkAPIToken(request)
            return try await next(request, context)
        }
        let database = context.parameters.get("database").flatMap(WireSpelling.database)
        if let keyName = HTTPField.Name(WireSpelling.keyIDHeader), request.headers[keyName] != nil {
            return try await signed(request, database: database, context: context, next: next)
        }
        do {
            try checkAPIToken(request)
        } catch let error as ShareError {
            return await answer(error, to: request, context: context)
        }
        // CloudKit JS 1.x sends `ckWebAuthToken=null&ckSession=null` while signed out (the literal word), and
        // the session in `ckSession` once signed in: either names the user, the word `null` none.
        let token = [WireSpelling.webAuthTokenParameter, WireSpelling.sessionParameter].lazy
            .compactMap { request.uri.queryParameters[$0[...]].map(String.init) }
            .first { !$0.isEmpty && $0 != WireSpelling.signedOutToken }
        guard let token else {
            // The API token alone: the store's access rules say what such a caller may do.
            if let database,
                let refusal = AccessRules.unauthenticated(
                    caller: AccessRules.unauthenticatedCaller, intent: .read, database: database)
            {
                return await answer(refusal, to: request, context: context)
            }
            context.caller.user = AccessRules.unauthenticatedCaller
            return await responding(request, context: context, next: next)
        }
        let user: UserRecordName
        do {
            user = try await service.tokens.redeem(token)
        } catch {
            return await answer(ShareError.answering(error), to: request, context: context)
        }
        context.caller.user = user
        let nextToken = await service.tokens.issue(for: user)
        let addressee = await service.identities.identity(of: user)?.email.map {
            WireSpelling.Addressee(recordName: user, email: $0)
        }
        var response = await WireSpelling.$addressee.withValue(addressee) {
            await responding(request, context: context, next: next)
        }
        if let name = HTTPField.Name(WireSpelling.webAuthTokenHeader) { response.headers[name] = nextToken }
        return response
    }

    /// A server-to-server request: checked against the keys `serve --server-key` was given, over the body
    /// and the request target as received (path and query, as CloudKit JS signs it); public database only.
    private func signed(
        _ request: Request, database: DatabaseScope?, context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var request = request
        func header(_ name: String) -> String? { HTTPField.Name(name).flatMap { request.headers[$0] } }
        let body: Data
        do {
            let buffer = try await request.collectBody(upTo: configuration.maxBodyBytes)
            body = Data(buffer.readableBytesView)
        } catch {
            return await answer(configuration.bodyTooLarge, to: request, context: context)
        }
        let keyID = header(WireSpelling.keyIDHeader)
        // The target as received; a bare `?` with nothing after it is no query.
        var target = request.head.path ?? request.uri.path
        if target.hasSuffix("?") { target.removeLast() }
        if let refusal = configuration.serverKeys.check(
            keyID: keyID, date: header(WireSpelling.dateHeader), signature: header(WireSpelling.signatureHeader),
            body: body, subpath: target, now: Date())
        {
            return await answer(refusal, to: request, context: context)
        }
        if let database, database != .public {
            return await answer(
                ShareError(
                    .authenticationFailed,
                    "a server-to-server key reaches the public database only; the \(WireSpelling.database(database)) database "
                        + "needs a signed-in user's ckWebAuthToken"),
                to: request, context: context)
        }
        context.caller.user = AccessRules.serverKeyCaller(keyID: keyID ?? "")
        return await responding(request, context: context, next: next)
    }

    /// The answer of the route, or of the error it threw.
    private func responding(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async -> Response {
        do {
            return try await next(request, context)
        } catch {
            return await answer(ShareError.answering(error), to: request, context: context)
        }
    }

    /// A refusal as CloudKit answers it; `AUTHENTICATION_REQUIRED` leads to the sign-in page.
    private func answer(_ error: ShareError, to request: Request, context: Context) async -> Response {
        RequestNotes.answered(error)
        let redirectURL =
            error.code == .authenticationRequired ? await service.redirectURL(request, context: context) : nil
        let body =
            (try? WireCoding.bodyEncoder().encode(WireError(error.withoutMachinePaths, redirectURL: redirectURL)))
            ?? Data()
        return WireResponse.json(body, status: error.status)
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
