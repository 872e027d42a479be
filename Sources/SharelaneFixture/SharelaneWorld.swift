import Emulator
import Foundation
import Lanes
import Recipe
import ShareKit

/// A container of one test's own on a shared emulator, seeded as the emulator was: the recipe applied and its
/// lanes run there, its people signed in. Tests that run in parallel on one emulator each take one, and
/// none sees, resets or restores another's.
///
/// ```swift
/// let world = try await emulator.world()
/// let token = try world.webAuthToken(for: "bob")   // requests to world.container
/// try await world.reset()                          // this container only
/// ```
public struct SharelaneWorld: Sendable {
    /// The container's identifier, new for each world: what requests put in their path.
    public let container: String
    public let environment: CloudKitEnvironment
    /// The seeded recipe's people, each with a web auth token good while the emulator runs.
    public let users: [FixtureUserToken]
    /// The emulator it is a world of.
    public let emulator: SharelaneEmulator

    /// The web auth token of the recipe's user `handle` in this world.
    /// - Throws: `NOT_FOUND` for a handle the recipe does not have.
    public func webAuthToken(for handle: String) throws -> String {
        guard let user = users.first(where: { $0.handle == handle }) else {
            throw ShareError(
                .notFound,
                "the recipe has no user \(handle); its users are " + users.map(\.handle).joined(separator: ", "))
        }
        return user.webAuthToken
    }

    /// The user record name of the recipe's user `handle`, as in every world.
    public func userRecordName(for handle: String) -> String? {
        users.first { $0.handle == handle }?.userRecordName
    }

    /// Back to the state after seeding (with `toEmpty`, nothing), this world only.
    public func reset(toEmpty: Bool = false) async throws {
        try await emulator.reset(container: container, environment: environment, toEmpty: toEmpty)
    }

    /// Keeps this world as it is now under `name`; other tests' worlds kept under the same name stay.
    public func snapshot(_ name: String) async throws {
        try await emulator.snapshot(name, container: container, environment: environment)
    }

    /// Puts this world back as the snapshot `name` holds it.
    public func restore(_ name: String) async throws {
        try await emulator.restore(name, container: container, environment: environment)
    }

    /// Removes the world with its data, reset point and snapshot copies, freeing its place under the
    /// emulator's limit on worlds (`Configuration.maxWorlds`).
    public func remove() async throws {
        try await emulator.removeWorld(container: container, environment: environment)
    }
}

extension SharelaneEmulator {
    /// A new container of the test's own, seeded from the emulator's recipe and lanes as the emulator was
    /// (empty for `startEmpty()`), in the seeded environment: the way to run Swift Testing's parallel tests
    /// on one emulator.
    /// - Parameter container: its identifier; by default the seeded container's with `.world-` and a random
    ///   suffix (`iCloud.com.example.Lists.world-3f9c2a7e`).
    /// - Throws: `BAD_REQUEST` for a container identifier that is not one, or one that holds data already;
    ///   `QUOTA_EXCEEDED` past `maxWorlds`; why seeding failed (`FixtureSeeder.Failure`).
    public func world(container: String? = nil) async throws -> SharelaneWorld {
        let name = container ?? "\(self.container).world-\(UUID().uuidString.prefix(8).lowercased())"
        if let problem = StoreWorld.containerProblem(name) { throw ShareError(.badRequest, problem, subject: name) }
        let world = StoreWorld(container: name, environment: environment)
        if try seeding.worlds.worlds().contains(world) {
            throw ShareError(
                .badRequest, "the container \(name) holds data already: give a new name, or none for a random one",
                subject: name)
        }
        var people: [FixtureUser] = []
        if let recipe = seeding.recipe {
            var placed = recipe
            placed.container = name
            placed.environment = environment
            let reload = seeding.reload.map { original in
                { @Sendable overrides in
                    var again = try original(overrides)
                    again.container = name
                    return again
                }
            }
            (_, people) = try await FixtureSeeder(worlds: seeding.worlds, logger: seeding.logger).seed(
                placed, lanes: seeding.lanes, reload: reload, overrides: seeding.variables)
        }
        await emulator.markResetPoint(of: world, users: people)
        let signedIn = try await emulator.fixtureUsers(container: name, environment: environment)
        return SharelaneWorld(container: name, environment: environment, users: signedIn, emulator: self)
    }
}
