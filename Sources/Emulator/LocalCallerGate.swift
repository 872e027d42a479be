import CloudKitWire
import Hummingbird
import ShareKit

/// Who may use serve's own endpoints under `/_sharelane/` (the network's faults, resets and snapshots, the
/// fixture's users): callers on this machine (the connection's remote address in 127.0.0.0/8 or ::1) with the
/// API token (`ckAPIToken`, or the console's session cookie).
struct LocalCallerGate: Sendable {
    let configuration: EmulatorConfiguration
    let sessions: ConsoleSessions

    /// Lets only a caller on this machine with the API token (or a console session) through.
    /// - Throws: `ACCESS_DENIED` from another machine, `AUTHENTICATION_FAILED` without the token.
    func admit(_ request: Request, context: EmulatorRequestContext, path: String) async throws {
        guard let address = context.remoteIPAddress, EmulatorConfiguration.isLoopback(ipAddress: address) else {
            throw ShareError(
                .accessDenied,
                "\(path) answers callers on this machine only (127.0.0.0/8, ::1): send the request from "
                    + "the machine that runs sharelane serve")
        }
        if let given = request.uri.queryParameters[WireSpelling.apiTokenParameter[...]], !given.isEmpty {
            guard configuration.acceptsAPIToken(String(given)) else {
                throw ShareError(
                    .authenticationFailed,
                    "the ckAPIToken is not this emulator's API token (printed when `sharelane serve` starts)")
            }
            return
        }
        guard await sessions.isLive(request.cookies[ConsoleSessions.cookieName]?.value) else {
            throw ShareError(
                .authenticationFailed,
                "\(path) needs the emulator's API token: add ?ckAPIToken=… (or sign in to the console)")
        }
        // A browser sends the cookie with a page's request to the same site, and a dev server on localhost:5173 is
        // the same site as the console on localhost:8420: the cookie stands for the token only in a request of no
        // page, or of this server's own.
        if let origin = request.headers[.origin], origin != Self.ownOrigin(request) {
            throw ShareError(
                .authenticationFailed,
                "\(path) takes the console's session only from the console itself, not from a page of "
                    + "\(EmulatorConfiguration.origin(of: origin) ?? "another origin"): send ?ckAPIToken=…")
        }
    }

    /// `http://` and the name the request called this server by.
    private static func ownOrigin(_ request: Request) -> String? {
        request.head.authority.flatMap { EmulatorConfiguration.origin(of: "http://\($0)") }
    }
}
