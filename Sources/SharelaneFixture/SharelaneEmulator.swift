import Emulator
import Foundation
import Lanes
import Logging
import Recipe
import ShareKit
import ShareStoreSQLite

/// `sharelane serve` in this process, on a free loopback port, seeded from a recipe: a CloudKit Web
/// Services emulator for a test suite, with the recipe's people signed in and a reset point.
///
/// ```swift
/// let emulator = try await SharelaneEmulator.start(recipeFile: "Recipes/sharelane.yaml", lanes: ["demo"])
/// defer { Task { await emulator.stop() } }
/// let token = try await emulator.webAuthToken(for: "bob")   // bob of the recipe
/// // … requests to emulator.baseURL with ckAPIToken=emulator.apiToken …
/// try await emulator.reset()                                // back to the seeded state
/// ```
///
/// Each emulator keeps its data in memory of its own and holds no global state, so suites run in parallel.
public final class SharelaneEmulator: Sendable {
    /// `http://127.0.0.1:PORT`.
    public let baseURL: String
    /// The API token requests carry as `ckAPIToken`.
    public let apiToken: String
    /// The seeded recipe's container and environment (the default container's development without one).
    public let container: String
    public let environment: CloudKitEnvironment
    /// The seeded recipe's people, by handle.
    public let users: [FixtureUser]

    let emulator: CloudKitEmulator
    let server: Task<Void, any Error>

    init(
        baseURL: String, apiToken: String, world: StoreWorld, users: [FixtureUser], emulator: CloudKitEmulator,
        server: Task<Void, any Error>
    ) {
        self.baseURL = baseURL
        self.apiToken = apiToken
        self.container = world.container
        self.environment = world.environment
        self.users = users
        self.emulator = emulator
        self.server = server
    }

    /// Starts an emulator seeded from the recipe file at `path`.
    /// - Parameters:
    ///   - lanes: lanes of the recipe run after it is applied, in order; their outcome is the reset point.
    ///   - variables: the recipe's variables (`--var K=V`).
    /// - Throws: the recipe's own `FILE:LINE:COLUMN` errors (`RecipeErrors`), or why seeding failed.
    public static func start(
        recipeFile path: String, lanes: [String] = [], variables: [String: String] = [:],
        apiToken: String = "sharelane-testing", logger: Logger = quietLogger
    ) async throws -> SharelaneEmulator {
        let environment = ProcessInfo.processInfo.environment
        let reload: LaneRunner.RecipeReloader = { overrides in
            try RecipeLoader(environment: environment, overrides: overrides).load(path: path)
        }
        return try await start(
            recipe: try reload(variables), lanes: lanes, reload: reload, variables: variables, apiToken: apiToken,
            logger: logger)
    }

    /// Starts an emulator seeded from a recipe written in the test itself. `!asset` paths and includes are
    /// read beside `file` (the current directory's `recipe.yaml` by default).
    public static func start(
        recipeYAML yaml: String, file: String = "recipe.yaml", lanes: [String] = [],
        variables: [String: String] = [:], apiToken: String = "sharelane-testing", logger: Logger = quietLogger
    ) async throws -> SharelaneEmulator {
        let environment = ProcessInfo.processInfo.environment
        let reload: LaneRunner.RecipeReloader = { overrides in
            try RecipeLoader(environment: environment, overrides: overrides).load(yaml: yaml, file: file)
        }
        return try await start(
            recipe: try reload(variables), lanes: lanes, reload: reload, variables: variables, apiToken: apiToken,
            logger: logger)
    }

    /// Starts an emulator with nothing in it: every container and environment empty.
    public static func startEmpty(apiToken: String = "sharelane-testing", logger: Logger = quietLogger) async throws
        -> SharelaneEmulator
    {
        try await start(recipe: nil, lanes: [], reload: nil, variables: [:], apiToken: apiToken, logger: logger)
    }

    /// A logger that writes nothing.
    public static let quietLogger = Logger(label: "sharelane.testing") { _ in SwiftLogNoOpLogHandler() }

    static func start(
        recipe: Recipe?, lanes: [String], reload: LaneRunner.RecipeReloader?, variables: [String: String],
        apiToken: String, logger: Logger
    ) async throws -> SharelaneEmulator {
        let worlds = SQLiteWorlds(inMemoryWith: logger)
        var world = StoreWorld(container: StoreWorld.defaultContainer, environment: .development)
        var people: [FixtureUser] = []
        if let recipe {
            (world, people) = try await FixtureSeeder(worlds: worlds, logger: logger).seed(
                recipe, lanes: lanes, reload: reload, overrides: variables)
        }
        let emulator = CloudKitEmulator(
            worlds: worlds,
            configuration: EmulatorConfiguration(host: "127.0.0.1", port: 0, apiToken: apiToken),
            logger: logger)
        try await emulator.markResetPoint(users: recipe == nil ? [:] : [world: people])
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = emulator.application { port in
            continuation.yield(port)
            continuation.finish()
        }
        let server = Task { try await application.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            server.cancel()
            throw ShareError(.internalError, "the emulator did not start listening")
        }
        return SharelaneEmulator(
            baseURL: "http://127.0.0.1:\(port)", apiToken: apiToken, world: world, users: people, emulator: emulator,
            server: server)
    }

    /// Stops the server; requests under way are finished first.
    public func stop() async {
        server.cancel()
        _ = try? await server.value
    }

    /// A new web auth token for the recipe's user `handle` in the seeded world.
    /// - Throws: `NOT_FOUND` for a handle the recipe does not have.
    public func webAuthToken(for handle: String) async throws -> String {
        let signedIn = try await emulator.fixtureUsers(container: container, environment: environment)
        guard let user = signedIn.first(where: { $0.handle == handle }) else {
            throw ShareError(
                .notFound,
                "the recipe has no user \(handle); its users are "
                    + users.map(\.handle).joined(separator: ", "))
        }
        return user.webAuthToken
    }

    /// The user record name of the recipe's user `handle` (the same in every world).
    public func userRecordName(for handle: String) -> String? {
        users.first { $0.handle == handle }.map { StableName.userRecordName(email: EmailAddress.normalized($0.email)) }
    }

    /// Back to the state after seeding; with `toEmpty`, nothing at all. Only the seeded container and
    /// environment unless `container` names another (or `everything` asks for all).
    public func reset(toEmpty: Bool = false, everything: Bool = false) async throws {
        _ = try await emulator.reset(
            container: everything ? nil : container, environment: everything ? nil : environment, toEmpty: toEmpty)
    }

    /// Removes `container`'s worlds (or its world in `environment`): their data, reset points and snapshot
    /// copies, freeing their places under the store's limit on worlds. Named again, a world starts empty.
    /// - Throws: `NOT_FOUND` when the emulator holds no such world.
    public func removeWorld(container: String, environment: CloudKitEnvironment? = nil) async throws {
        _ = try await emulator.removeWorlds(container: container, environment: environment)
    }

    /// Keeps the seeded world as it is now under `name`.
    public func snapshot(_ name: String) async throws {
        _ = try await emulator.takeSnapshot(name, container: container, environment: environment)
    }

    /// Puts the seeded world back as the snapshot `name` holds it.
    public func restore(_ name: String) async throws {
        _ = try await emulator.restoreSnapshot(name, container: container, environment: environment)
    }

    /// Every world as it is now, in the snapshot file format (`serve --import` reads it).
    public func exportSnapshot() async throws -> Data {
        try await emulator.exportSnapshot()
    }
}
