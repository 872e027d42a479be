import CloudKitWire
import Foundation
import Hummingbird
import Logging
import ShareKit

/// `GET` and `POST /_sharelane/faults`: the network conditions of a running `sharelane serve`, read and
/// changed while it runs, so that a test can break the network in the middle of an apply.
///
/// The body and the answer are `NetworkConditions`' JSON: `{"latency": "80ms~20ms", "throttle": "40/s",
/// "faults": "unavailable=3%,lost-answer=1%", "seed": 7}`. `POST` replaces the whole set, so a setting left out
/// is off and `{}` is a good network; it answers the conditions now in force. Only callers on this machine
/// (the connection's remote address in 127.0.0.0/8 or ::1) with the API token (`ckAPIToken`, or the console's
/// session cookie sent by no page but the console's own) are served. The network conditions never apply to
/// this endpoint.
struct NetworkFaultsEndpoint: Sendable {
    static let path = "/_sharelane/faults"

    let faults: NetworkFaults
    let configuration: EmulatorConfiguration
    let sessions: ConsoleSessions
    let logger: Logger

    func register(on router: Router<EmulatorRequestContext>) {
        let endpoint = self
        router.get(RouterPath(Self.path)) { request, context in
            try await endpoint.admit(request, context: context)
            return try Self.answer(endpoint.faults.current)
        }
        router.post(RouterPath(Self.path)) { request, context in
            try await endpoint.admit(request, context: context)
            return try await endpoint.change(request)
        }
    }

    /// Puts the conditions of the body in force.
    /// - Throws: `BAD_REQUEST` naming what cannot be read and what to write instead.
    private func change(_ request: Request) async throws -> Response {
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: 64 << 10)
        } catch {
            throw ShareError(.badRequest, "the body is over 64 KB or was cut short: send a small JSON object")
        }
        let conditions: NetworkConditions
        do {
            conditions = try JSONDecoder().decode(NetworkConditions.self, from: Data(body.readableBytesView))
        } catch let error as NetworkConditionsError {
            throw ShareError(.badRequest, error.description)
        } catch {
            throw ShareError(.badRequest, NetworkConditionsError.notAnObject.description)
        }
        faults.change(to: conditions)
        logger.notice("Network conditions changed: \(conditions)")
        return try Self.answer(conditions)
    }

    /// Lets only a caller on this machine with the API token (or a console session) through.
    /// - Throws: `ACCESS_DENIED` from another machine, `AUTHENTICATION_FAILED` without the token.
    private func admit(_ request: Request, context: EmulatorRequestContext) async throws {
        guard let address = context.remoteIPAddress, EmulatorConfiguration.isLoopback(ipAddress: address) else {
            throw ShareError(
                .accessDenied,
                "\(Self.path) answers callers on this machine only (127.0.0.0/8, ::1): send the request from "
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
                "\(Self.path) needs the emulator's API token: add ?ckAPIToken=… (or sign in to the console)")
        }
        // A browser sends the cookie with a page's request to the same site, and a dev server on localhost:5173 is
        // the same site as the console on localhost:8420: the cookie stands for the token only in a request of no
        // page, or of this server's own.
        if let origin = request.headers[.origin], origin != Self.ownOrigin(request) {
            throw ShareError(
                .authenticationFailed,
                "\(Self.path) takes the console's session only from the console itself, not from a page of "
                    + "\(EmulatorConfiguration.origin(of: origin) ?? "another origin"): send ?ckAPIToken=…")
        }
    }

    /// `http://` and the name the request called this server by.
    private static func ownOrigin(_ request: Request) -> String? {
        request.head.authority.flatMap { EmulatorConfiguration.origin(of: "http://\($0)") }
    }

    private static func answer(_ conditions: NetworkConditions) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return WireResponse.json(try encoder.encode(conditions))
    }
}
