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
/// Each emulator keeps its data in memory of its own and holds no global state, so suites run in parallel;
/// tests that share one emulator each take a world of their own (`world()`). An emulator stops, and its
/// memory is given back, on `stop()`, and when the test process loses the process that started it (`swift
/// test` killed): the test process then ends too, as nothing is left to read its results.
public final class SharelaneEmulator: Sendable {
    /// What `sharelane serve`'s options set, each defaulting as `serve` does (`EmulatorSettings`).
    public typealias Configuration = EmulatorSettings

    /// `http://127.0.0.1:PORT`.
    public let baseURL: String
    /// The API token requests carry as `ckAPIToken`.
    public let apiToken: String
    /// The seeded recipe's container and environment (the default container's development without one).
    public let container: String
    public let environment: CloudKitEnvironment
    /// The seeded recipe's people, by handle.
    public let users: [FixtureUser]
    /// What the emulator was started with.
    public let configuration: Configuration

    let emulator: CloudKitEmulator
    let server: Task<Void, any Error>
    let seeding: Seeding

    /// What seeded the emulator, to seed a world of a test's own (`world()`) the same way.
    struct Seeding: Sendable {
        var worlds: any StoreWorlds
        var recipe: Recipe?
        var lanes: [String]
        var reload: LaneRunner.RecipeReloader?
        var variables: [String: String]
        var logger: Logger
    }

    init(
        baseURL: String, apiToken: String, world: StoreWorld, users: [FixtureUser], configuration: Configuration,
        emulator: CloudKitEmulator, server: Task<Void, any Error>, seeding: Seeding
    ) {
        self.baseURL = baseURL
        self.apiToken = apiToken
        self.container = world.container
        self.environment = world.environment
        self.users = users
        self.configuration = configuration
        self.emulator = emulator
        self.server = server
        self.seeding = seeding
    }

    /// Starts an emulator seeded from the recipe file at `path`.
    /// - Parameters:
    ///   - lanes: lanes of the recipe run after it is applied, in order; their outcome is the reset point.
    ///   - variables: the recipe's variables (`--var K=V`).
    ///   - configuration: what `serve`'s options would set (server keys, strict tokens, index lag, faults…).
    /// - Throws: the recipe's own `FILE:LINE:COLUMN` errors (`RecipeErrors`), or why seeding failed
    ///   (`FixtureSeeder.Failure`, with the failed lane's step and place).
    public static func start(
        recipeFile path: String, lanes: [String] = [], variables: [String: String] = [:],
        configuration: Configuration = Configuration(), apiToken: String = "sharelane-testing",
        logger: Logger = quietLogger
    ) async throws -> SharelaneEmulator {
        let environment = ProcessInfo.processInfo.environment
        let reload: LaneRunner.RecipeReloader = { overrides in
            try RecipeLoader(environment: environment, overrides: overrides).load(path: path)
        }
        return try await start(
            recipe: try reload(variables), lanes: lanes, reload: reload, variables: variables,
            configuration: configuration, apiToken: apiToken, logger: logger)
    }

    /// Starts an emulator seeded from a recipe written in the test itself. `!asset` paths and includes are
    /// read beside `file` (the current directory's `recipe.yaml` by default).
    public static func start(
        recipeYAML yaml: String, file: String = "recipe.yaml", lanes: [String] = [],
        variables: [String: String] = [:], configuration: Configuration = Configuration(),
        apiToken: String = "sharelane-testing", logger: Logger = quietLogger
    ) async throws -> SharelaneEmulator {
        let environment = ProcessInfo.processInfo.environment
        let reload: LaneRunner.RecipeReloader = { overrides in
            try RecipeLoader(environment: environment, overrides: overrides).load(yaml: yaml, file: file)
        }
        return try await start(
            recipe: try reload(variables), lanes: lanes, reload: reload, variables: variables,
            configuration: configuration, apiToken: apiToken, logger: logger)
    }

    /// Starts an emulator with nothing in it: every container and environment empty.
    public static func startEmpty(
        configuration: Configuration = Configuration(), apiToken: String = "sharelane-testing",
        logger: Logger = quietLogger
    ) async throws -> SharelaneEmulator {
        try await start(
            recipe: nil, lanes: [], reload: nil, variables: [:], configuration: configuration, apiToken: apiToken,
            logger: logger)
    }

    /// A logger that writes nothing.
    public static let quietLogger = Logger(label: "sharelane.testing") { _ in SwiftLogNoOpLogHandler() }

    static func start(
        recipe: Recipe?, lanes: [String], reload: LaneRunner.RecipeReloader?, variables: [String: String],
        configuration: Configuration, apiToken: String, logger: Logger
    ) async throws -> SharelaneEmulator {
        let worlds = EmbeddedStore.worldsInMemory(limits: configuration.worldLimits, logger: logger)
        let recipe = recipe.map { configuration.placing($0) }
        let reload = reload.map { original in { @Sendable overrides in configuration.placing(try original(overrides)) }
        }
        var world = StoreWorld(
            container: configuration.container ?? StoreWorld.defaultContainer,
            environment: configuration.environment ?? .development)
        var people: [FixtureUser] = []
        if let recipe {
            (world, people) = try await FixtureSeeder(worlds: worlds, logger: logger).seed(
                recipe, lanes: lanes, reload: reload, overrides: variables)
        }
        let emulator = CloudKitEmulator(
            worlds: worlds,
            configuration: configuration.emulatorConfiguration(host: "127.0.0.1", port: 0, apiToken: apiToken),
            logger: logger)
        try await emulator.markResetPoint(users: recipe == nil ? [:] : [world: people])
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let application = emulator.application { port in
            continuation.yield(port)
            continuation.finish()
        }
        let server = Task {
            defer { continuation.finish() }
            try await application.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            server.cancel()
            let reason = await server.result.failure.map { ": \($0)" } ?? ""
            throw ShareError(.internalError, "the emulator did not start listening\(reason)")
        }
        let started = SharelaneEmulator(
            baseURL: "http://127.0.0.1:\(port)", apiToken: apiToken, world: world, users: people,
            configuration: configuration, emulator: emulator, server: server,
            seeding: Seeding(
                worlds: worlds, recipe: recipe, lanes: lanes, reload: reload, variables: variables, logger: logger))
        await OrphanWatch.shared.watch(started)
        return started
    }

    /// Stops the server (requests under way are finished first) and gives back the memory its worlds,
    /// reset points and snapshots held. Calling it again does nothing.
    public func stop() async {
        server.cancel()
        _ = try? await server.value
        await OrphanWatch.shared.forget(self)
        let held = (try? seeding.worlds.worlds()) ?? []
        for world in Set(held.map(\.container)) {
            _ = try? await emulator.removeWorlds(container: world)
        }
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

    /// The user record name of the recipe's user `handle` (the same in every world): a shared-database
    /// zone's `ownerRecordName`.
    public func userRecordName(for handle: String) -> String? {
        users.first { $0.handle == handle }.map { StableName.userRecordName(email: EmailAddress.normalized($0.email)) }
    }

    /// Back to the state after seeding; with `toEmpty`, nothing at all.
    /// - Parameters:
    ///   - container: the container to reset; nil: the seeded one (a test's own is `world.reset()`).
    ///   - environment: its environment; nil: the seeded environment when `container` is nil, otherwise both
    ///     of `container`'s.
    ///   - everything: every container and environment the emulator holds.
    /// - Throws: `BAD_REQUEST` for a container identifier that is not one.
    public func reset(
        container: String? = nil, environment: CloudKitEnvironment? = nil, toEmpty: Bool = false,
        everything: Bool = false
    ) async throws {
        if everything {
            _ = try await emulator.reset(toEmpty: toEmpty)
            return
        }
        let (container, environment) = chosen(container, environment)
        _ = try await emulator.reset(container: container, environment: environment, toEmpty: toEmpty)
    }

    /// Removes `container`'s worlds (or its world in `environment`): their data, reset points and snapshot
    /// copies, freeing their places under the store's limit on worlds. Named again, a world starts empty.
    /// - Throws: `NOT_FOUND` when the emulator holds no such world.
    public func removeWorld(container: String, environment: CloudKitEnvironment? = nil) async throws {
        _ = try await emulator.removeWorlds(container: container, environment: environment)
    }

    /// Keeps a world as it is now under `name`: the seeded one, or `container`'s (in `environment`, or both
    /// of its environments). Other worlds kept under `name` stay.
    /// - Throws: `BAD_REQUEST` for a name that is not letters, digits, `.`, `-` and `_`; `QUOTA_EXCEEDED`
    ///   past serve's limits on snapshots.
    public func snapshot(_ name: String, container: String? = nil, environment: CloudKitEnvironment? = nil)
        async throws
    {
        let (container, environment) = chosen(container, environment)
        _ = try await emulator.takeSnapshot(name, container: container, environment: environment)
    }

    /// Puts a world back as the snapshot `name` holds it: the seeded one, or `container`'s.
    /// - Throws: `NOT_FOUND` when no snapshot is named `name`.
    public func restore(_ name: String, container: String? = nil, environment: CloudKitEnvironment? = nil)
        async throws
    {
        let (container, environment) = chosen(container, environment)
        _ = try await emulator.restoreSnapshot(name, container: container, environment: environment)
    }

    /// Every world as it is now, in the snapshot file format (`serve --import` reads it).
    public func exportSnapshot() async throws -> Data {
        try await emulator.exportSnapshot()
    }

    /// The seeded world when no container is named; a named container in `environment` or both of its.
    private func chosen(_ container: String?, _ environment: CloudKitEnvironment?) -> (String, CloudKitEnvironment?) {
        guard let container else { return (self.container, environment ?? self.environment) }
        return (container, environment)
    }
}

extension EmulatorSettings {
    /// The store's limits: `maxWorlds`, and the standard ones.
    public var worldLimits: WorldLimits {
        var limits = WorldLimits.standard
        if let maxWorlds { limits.worlds = maxWorlds }
        return limits
    }

    /// `recipe` in the container and environment these settings seed in, where they name one.
    func placing(_ recipe: Recipe) -> Recipe {
        var placed = recipe
        if let container { placed.container = container }
        if let environment { placed.environment = environment }
        return placed
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
