import CloudKitWire
import Foundation
import Hummingbird
import Logging
import ShareKit

/// Writes one `info` line per request: method, path (never the query, which holds the tokens), status, user
/// and time. Outermost, it also answers every error that reaches it as CloudKit would (`ShareError`'s JSON;
/// the router's own answers, such as 404 for a path nothing serves, as themselves; anything else as
/// `INTERNAL_ERROR`), so that each answer is logged as it was sent. The console's pages and its sign-in are
/// logged the same way: the path only, so a `?ckAPIToken=` given to the console is never written. Where network
/// conditions are in force (`serve --latency/--throttle/--faults`), the line says which fault the request met,
/// `fault=none` for none; a reset request, closed before any answer, has `-` for its status, and a lost answer
/// the status of the answer that was never sent.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = EmulatorRequestContext

    let logger: Logger
    /// Where the console's Requests page reads them (Web Services, sign-ins and `/_sharelane/`, not its own
    /// pages).
    var history: RequestHistory? = nil

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        let response: Response
        let notes = RequestNotes()
        var refusal: ShareError?
        do {
            response = try await RequestNotes.$current.withValue(notes) { try await next(request, context) }
        } catch let error as any HTTPResponseError where !(error is ShareError) {
            response = try error.response(from: request, context: context)
        } catch {
            let answered = ShareError.answering(error)
            refusal = answered
            response = try answered.response(from: request, context: context)
        }
        // A refusal a middleware inside this one made into the answer (authentication, cross-origin headers).
        refusal = refusal ?? notes.answered
        let elapsed = ContinuousClock.now - started
        // Tenths of a millisecond, spelled without `String(format:)`, whose trip through `NSString` was half the
        // cost of logging a request under load.
        let tenths =
            elapsed.components.seconds * 10_000 + (elapsed.components.attoseconds + 50_000_000_000_000)
            / 100_000_000_000_000
        var metadata: Logger.Metadata = [
            "user": "\(context.caller.user ?? "-")", "ms": "\(tenths / 10).\(tenths % 10)",
        ]
        let met = context.network.met
        if let met { metadata["fault"] = "\(met.rawValue)" }
        let status = met == .reset ? "-" : "\(response.status.code)"
        logger.info("\(request.method.rawValue) \(request.uri.path) \(status)", metadata: metadata)
        if let refusal, refusal.code == .internalError {
            // The answer names no file of this machine (`ShareError.withoutMachinePaths`); whoever runs serve
            // reads the whole reason here, or what the store knows where the answer carries no reason.
            logger.warning(
                "\(request.method.rawValue) \(request.uri.path) failed: \(refusal.insight ?? refusal.reason)")
        }
        if let history, Self.isClientRequest(request.uri.path) {
            var refusals = notes.noted
            if let refusal {
                refusals.insert(RequestHistory.Refusal(refusal, subject: refusal.subject), at: 0)
            }
            await history.record(
                RequestHistory.Entry(
                    at: Date(), method: request.method.rawValue, path: request.uri.path, user: context.caller.user,
                    status: Int(response.status.code), refusals: refusals))
        }
        return response
    }

    /// Whether a path is a client's (Web Services, sign-in, assets, `/_sharelane/`), not the console's own.
    static func isClientRequest(_ path: String) -> Bool {
        ["/database/", "/device/", "/auth/", "/assets/", "/_sharelane/"].contains { path.hasPrefix($0) }
    }
}
