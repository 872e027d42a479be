import Foundation
import Hummingbird
import Logging
import ShareKit

/// Writes one `info` line per request: method, path (never the query, which holds the tokens), status, user
/// and time. Outermost, it also answers every error that reaches it as CloudKit would (`ShareError`'s JSON;
/// the router's own answers, such as 404 for a path nothing serves, as themselves; anything else as
/// `INTERNAL_ERROR`), so that each answer is logged as it was sent. The console's pages and its sign-in are
/// logged the same way: the path only, so a `?ckAPIToken=` given to the console is never written.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext

    let logger: Logger

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError where !(error is ShareError) {
            response = try error.response(from: request, context: context)
        } catch {
            response = try ShareError.answering(error).response(from: request, context: context)
        }
        let elapsed = ContinuousClock.now - started
        let millis = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        logger.info(
            "\(request.method.rawValue) \(request.uri.path) \(response.status.code)",
            metadata: ["user": "\(context.caller.user ?? "-")", "ms": "\(String(format: "%.1f", millis))"])
        return response
    }
}
