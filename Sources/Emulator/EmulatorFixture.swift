import CloudKitWire
import Foundation
import ShareKit

/// A person of a seeded recipe, by the handle the recipe gives them.
public struct FixtureUser: Sendable, Hashable, Codable {
    public var handle: String
    public var email: String
    public var name: String?

    public init(handle: String, email: String, name: String? = nil) {
        self.handle = handle
        self.email = email
        self.name = name
    }
}

/// A fixture user signed in: what a test needs to act as them.
public struct FixtureUserToken: Sendable, Hashable, Codable {
    public var handle: String
    public var emailAddress: String
    public var userRecordName: String
    public var name: String?
    /// A secret: hand it to the test, never print it.
    public var webAuthToken: String
}

/// What the emulator keeps to act as a test fixture: each world's reset point (the state after seeding),
/// the named snapshots, and the seeded recipes' users.
actor FixtureState {
    var resetPoints: [StoreWorld: any WorldSnapshot] = [:]
    var named: [String: [StoreWorld: any WorldSnapshot]] = [:]
    var users: [StoreWorld: [FixtureUser]] = [:]

    func setResetPoint(_ snapshot: any WorldSnapshot, for world: StoreWorld) { resetPoints[world] = snapshot }
    func setUsers(_ list: [FixtureUser], in world: StoreWorld) { users[world] = list }
    func save(_ snapshot: any WorldSnapshot, named name: String, for world: StoreWorld) {
        named[name, default: [:]][world] = snapshot
    }
}

/// The format of a snapshot file (`serve --import`, `--export-on-exit`, `CloudKitEmulator.exportSnapshot`):
/// JSON, each world's SQLite database in base64. Docs/Testing.md describes it; `version` changes when it
/// does.
struct SnapshotFile: Codable {
    static let formatName = "sharelane-snapshot"
    static let currentVersion = 1

    struct World: Codable {
        var container: String
        var environment: CloudKitEnvironment
        /// The world's SQLite database file, base64.
        var database: String
        /// The seeded recipe's people, for `GET /_sharelane/users`.
        var users: [FixtureUser]?
    }

    var format: String
    var version: Int
    var worlds: [World]
}

extension CloudKitEmulator {
    /// Which worlds a fixture call acts on: one, a container's two environments, or (neither named) every
    /// world the store keeps or has a reset point for.
    func fixtureWorlds(container: String?, environment: CloudKitEnvironment?) async throws -> [StoreWorld] {
        if let container {
            if let problem = StoreWorld.containerProblem(container) { throw ShareError(.badRequest, problem) }
            if let environment { return [StoreWorld(container: container, environment: environment)] }
            return CloudKitEnvironment.allCases.map { StoreWorld(container: container, environment: $0) }
        }
        if environment != nil {
            throw ShareError(.badRequest, "an environment needs its container: give container too, or neither")
        }
        let points = await service.fixture.resetPoints.keys
        return Set(try service.worlds.worlds()).union(points).sorted {
            ($0.container, WireSpelling.environment($0.environment)) < (
                $1.container, WireSpelling.environment($1.environment)
            )
        }
    }

    /// Makes the state of every world now its reset point, and remembers the seeded recipes' people: what
    /// `serve --recipe` does once seeded.
    public func markResetPoint(users: [StoreWorld: [FixtureUser]] = [:]) async throws {
        for world in try service.worlds.worlds() {
            let snapshot = try await service.worlds.snapshot(world)
            await service.fixture.setResetPoint(snapshot, for: world)
        }
        for (world, list) in users { await service.fixture.setUsers(list, in: world) }
    }

    /// Puts worlds back to their reset points (a world never seeded is emptied), or, with `toEmpty`, empties
    /// them. Each waits for its requests under way; none sees half a reset. Answers the worlds reset.
    public func reset(container: String? = nil, environment: CloudKitEnvironment? = nil, toEmpty: Bool = false)
        async throws -> [StoreWorld]
    {
        let worlds = try await fixtureWorlds(container: container, environment: environment)
        for world in worlds {
            let point = toEmpty ? nil : await service.fixture.resetPoints[world]
            try await service.gate.exclusively(world) {
                if let point {
                    try await service.worlds.restore(world, to: point)
                } else {
                    try await service.worlds.store(for: world).reset()
                }
                await service.identities.forget(world)
            }
        }
        return worlds
    }

    /// Keeps the worlds as they are now under `name`, to go back to with `restoreSnapshot`.
    public func takeSnapshot(_ name: String, container: String? = nil, environment: CloudKitEnvironment? = nil)
        async throws -> [StoreWorld]
    {
        try Self.checkSnapshotName(name)
        let worlds = try await fixtureWorlds(container: container, environment: environment)
        for world in worlds {
            let snapshot = try await service.gate.exclusively(world) { try await service.worlds.snapshot(world) }
            await service.fixture.save(snapshot, named: name, for: world)
        }
        return worlds
    }

    /// Puts the worlds a snapshot holds (of those named) back as it holds them.
    /// - Throws: `NOT_FOUND` for a name no snapshot has.
    public func restoreSnapshot(_ name: String, container: String? = nil, environment: CloudKitEnvironment? = nil)
        async throws -> [StoreWorld]
    {
        guard let kept = await service.fixture.named[name] else {
            throw ShareError(
                .notFound, "no snapshot is named \(name); take one with POST /_sharelane/snapshots/\(name)")
        }
        let wanted = Set(try await fixtureWorlds(container: container, environment: environment))
        var restored: [StoreWorld] = []
        for (world, snapshot) in kept.sorted(by: { $0.key.description < $1.key.description })
        where container == nil || wanted.contains(world) {
            try await service.gate.exclusively(world) {
                try await service.worlds.restore(world, to: snapshot)
                await service.identities.forget(world)
            }
            restored.append(world)
        }
        return restored
    }

    /// The worlds a recipe seeded (or a snapshot file brought people to), in order.
    public func seededWorlds() async -> [StoreWorld] {
        await service.fixture.users.keys.sorted { $0.description < $1.description }
    }

    /// The seeded recipe's people of a world (the only seeded world when none is named), each signed in with
    /// their fixture token: good for every request while serve runs (`TokenIssuer.issueKept`; with
    /// `--strict-tokens` a new single-use one).
    public func fixtureUsers(container: String? = nil, environment: CloudKitEnvironment? = nil) async throws
        -> [FixtureUserToken]
    {
        let seeded = await service.fixture.users
        let world: StoreWorld
        if let container {
            world = StoreWorld(container: container, environment: environment ?? .development)
        } else if seeded.count == 1, let only = seeded.keys.first {
            world = only
        } else {
            guard !seeded.isEmpty else { return [] }
            throw ShareError(
                .badRequest,
                "several worlds were seeded (\(seeded.keys.map(\.description).sorted().joined(separator: ", "))): "
                    + "name one with container and environment")
        }
        var tokens: [FixtureUserToken] = []
        for person in seeded[world] ?? [] {
            let user = try await service.signIn(email: person.email, name: person.name, in: world)
            let token = await service.tokens.issueKept(for: user.recordName)
            tokens.append(
                FixtureUserToken(
                    handle: person.handle, emailAddress: user.email ?? person.email, userRecordName: user.recordName,
                    name: user.name, webAuthToken: token))
        }
        return tokens
    }

    /// Every world as it is now, in the snapshot file format.
    public func exportSnapshot() async throws -> Data {
        var worlds: [SnapshotFile.World] = []
        let users = await service.fixture.users
        for world in try service.worlds.worlds() {
            let snapshot = try await service.gate.exclusively(world) { try await service.worlds.snapshot(world) }
            worlds.append(
                SnapshotFile.World(
                    container: world.container, environment: world.environment,
                    database: try snapshot.serialized().base64EncodedString(), users: users[world]))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(
            SnapshotFile(format: SnapshotFile.formatName, version: SnapshotFile.currentVersion, worlds: worlds))
    }

    /// Puts every world of a snapshot file in place (worlds it does not hold are left as they are).
    /// - Throws: `BAD_REQUEST` naming what is wrong with the file.
    public func importSnapshot(_ data: Data) async throws {
        let file: SnapshotFile
        do {
            file = try JSONDecoder().decode(SnapshotFile.self, from: data)
        } catch {
            throw ShareError(
                .badRequest,
                "not a sharelane snapshot file (JSON with format \"\(SnapshotFile.formatName)\"): \(error)")
        }
        guard file.format == SnapshotFile.formatName else {
            throw ShareError(.badRequest, "not a sharelane snapshot file: its format is \"\(file.format)\"")
        }
        guard file.version <= SnapshotFile.currentVersion else {
            throw ShareError(
                .badRequest,
                "this snapshot file is version \(file.version), newer than this sharelane reads "
                    + "(\(SnapshotFile.currentVersion)): update sharelane")
        }
        for entry in file.worlds {
            let world = StoreWorld(container: entry.container, environment: entry.environment)
            if let problem = StoreWorld.containerProblem(world.container) { throw ShareError(.badRequest, problem) }
            guard let bytes = Data(base64Encoded: entry.database) else {
                throw ShareError(.badRequest, "the database of \(world) in the snapshot file is not base64")
            }
            let snapshot = try service.worlds.snapshot(serialized: bytes)
            try await service.gate.exclusively(world) {
                try await service.worlds.restore(world, to: snapshot)
                await service.identities.forget(world)
            }
            if let users = entry.users { await service.fixture.setUsers(users, in: world) }
        }
    }

    /// A snapshot's name goes in a URL path: letters, digits, `.`, `-` and `_`.
    static func checkSnapshotName(_ name: String) throws {
        let allowed = name.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
                || "._-".unicodeScalars.contains($0)
        }
        guard !name.isEmpty, name.count <= 100, allowed else {
            throw ShareError(
                .badRequest, "\"\(name)\" cannot name a snapshot: use letters, digits, '.', '-' and '_' (at most 100)")
        }
    }
}
