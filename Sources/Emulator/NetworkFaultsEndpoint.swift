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

    private func admit(_ request: Request, context: EmulatorRequestContext) async throws {
        try await LocalCallerGate(configuration: configuration, sessions: sessions).admit(
            request, context: context, path: Self.path)
    }

    private static func answer(_ conditions: NetworkConditions) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return WireResponse.json(try encoder.encode(conditions))
    }
}
