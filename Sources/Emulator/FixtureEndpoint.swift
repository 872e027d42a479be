import CloudKitWire
import Foundation
import Hummingbird
import Logging
import ShareKit

/// serve as a test fixture, over REST, as the Firebase emulators' REST calls: back to the seeded state
/// between tests, named snapshots, and the seeded recipe's people with fresh tokens.
///
/// - `POST /_sharelane/reset` — `{"to": "empty"}` empties instead of going back to the seeded state;
/// - `POST /_sharelane/snapshots/NAME`, `POST /_sharelane/snapshots/NAME/restore`,
///   `DELETE /_sharelane/snapshots/NAME`;
/// - `GET /_sharelane/users` — `{"users": {HANDLE: {emailAddress, userRecordName, name, webAuthToken}}}`;
/// - `DELETE /_sharelane/worlds/CONTAINER[/ENVIRONMENT]` — removes a world (a container's two without an
///   environment), freeing its place under the store's limit on worlds.
///
/// The others take `container` and `environment` (in the JSON body, or the query) to act on one world, or a
/// container's two; neither acts on every world. Only callers on this machine with the API token are served
/// (`LocalCallerGate`), as `/_sharelane/faults`.
struct FixtureEndpoint: Sendable {
    static let resetPath = "/_sharelane/reset"
    static let snapshotsPath = "/_sharelane/snapshots"
    static let usersPath = "/_sharelane/users"
    static let worldsPath = "/_sharelane/worlds"

    let emulator: CloudKitEmulator
    let gate: LocalCallerGate
    let logger: Logger

    /// What a fixture call's body may hold.
    struct Body: Decodable {
        var container: String?
        var environment: String?
        var to: String?
    }

    func register(on router: Router<EmulatorRequestContext>) {
        let endpoint = self
        router.post(RouterPath(Self.resetPath)) { request, context in
            try await endpoint.gate.admit(request, context: context, path: Self.resetPath)
            let body = try await Self.body(request)
            let toEmpty: Bool
            switch body.to {
            case nil, "seed": toEmpty = false
            case "empty": toEmpty = true
            case let other?:
                throw ShareError(
                    .badRequest, "\"to\": \"\(other)\" is not a state to reset to: give \"seed\" or \"empty\"")
            }
            let (container, environment) = try Self.world(body)
            let worlds = try await endpoint.emulator.reset(
                container: container, environment: environment, toEmpty: toEmpty)
            let names = worlds.map(\.description).joined(separator: ", ")
            endpoint.logger.info("reset \(names)\(toEmpty ? " to empty" : "")")
            return try Self.answer(["reset": worlds.map(\.description)])
        }
        router.post(RouterPath("\(Self.snapshotsPath)/:name")) { request, context in
            try await endpoint.gate.admit(request, context: context, path: Self.snapshotsPath)
            let name = context.parameters.get("name") ?? ""
            let (container, environment) = try Self.world(try await Self.body(request))
            let worlds = try await endpoint.emulator.takeSnapshot(
                name, container: container, environment: environment)
            return try Self.answer(["snapshot": [name], "worlds": worlds.map(\.description)])
        }
        router.delete(RouterPath("\(Self.snapshotsPath)/:name")) { request, context in
            try await endpoint.gate.admit(request, context: context, path: Self.snapshotsPath)
            let name = context.parameters.get("name") ?? ""
            try await endpoint.emulator.deleteSnapshot(name)
            return try Self.answer(["deleted": [name]])
        }
        router.post(RouterPath("\(Self.snapshotsPath)/:name/restore")) { request, context in
            try await endpoint.gate.admit(request, context: context, path: Self.snapshotsPath)
            let name = context.parameters.get("name") ?? ""
            let (container, environment) = try Self.world(try await Self.body(request))
            let worlds = try await endpoint.emulator.restoreSnapshot(
                name, container: container, environment: environment)
            return try Self.answer(["restored": worlds.map(\.description)])
        }
        for path in ["\(Self.worldsPath)/:container", "\(Self.worldsPath)/:container/:environment"] {
            router.delete(RouterPath(path)) { request, context in
                try await endpoint.gate.admit(request, context: context, path: Self.worldsPath)
                let (container, environment) = try Self.world(
                    Body(
                        container: context.parameters.get("container"),
                        environment: context.parameters.get("environment")))
                let removed = try await endpoint.emulator.removeWorlds(
                    container: container ?? "", environment: environment)
                endpoint.logger.info("removed \(removed.map(\.description).joined(separator: ", "))")
                return try Self.answer(["removed": removed.map(\.description)])
            }
        }
        router.get(RouterPath(Self.usersPath)) { request, context in
            try await endpoint.gate.admit(request, context: context, path: Self.usersPath)
            let query = request.uri.queryParameters
            let (container, environment) = try Self.world(
                Body(
                    container: query["container"].map(String.init), environment: query["environment"].map(String.init)))
            let users = try await endpoint.emulator.fixtureUsers(container: container, environment: environment)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let byHandle = Dictionary(users.map { ($0.handle, $0) }) { first, _ in first }
            return WireResponse.json(try encoder.encode(["users": byHandle]))
        }
    }

    /// The body's fields, with the query's `container` and `environment` where the body has none.
    static func body(_ request: Request) async throws -> Body {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: 64 << 10)
        } catch {
            throw ShareError(.badRequest, "the body is over 64 KB or was cut short: send a small JSON object")
        }
        var body = Body()
        if buffer.readableBytes > 0 {
            do {
                body = try JSONDecoder().decode(Body.self, from: Data(buffer.readableBytesView))
            } catch {
                throw ShareError(
                    .badRequest,
                    "the body is not a JSON object of container, environment and to: \(error.localizedDescription)")
            }
        }
        let query = request.uri.queryParameters
        body.container = body.container ?? query["container"].map(String.init)
        body.environment = body.environment ?? query["environment"].map(String.init)
        return body
    }

    static func world(_ body: Body) throws -> (String?, CloudKitEnvironment?) {
        guard let name = body.environment else { return (body.container, nil) }
        guard let environment = WireSpelling.environment(name) else {
            throw ShareError(.badRequest, "unknown environment \"\(name)\": give development or production")
        }
        return (body.container, environment)
    }

    static func answer(_ value: [String: [String]]) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return WireResponse.json(try encoder.encode(value))
    }
}
