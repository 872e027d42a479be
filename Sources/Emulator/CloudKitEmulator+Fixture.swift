import CloudKitWire
import Foundation
import ShareKit

extension CloudKitEmulator {
    /// Which worlds a fixture call acts on: one, a container's two environments, or (neither named) every
    /// world the store keeps or has a reset point for.
    func fixtureWorlds(container: String?, environment: CloudKitEnvironment?) async throws -> [StoreWorld] {
        if let container {
            try Self.checkContainer(container)
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
    /// `serve --recipe` does once seeded. No world is opened: each one's point is taken when first needed.
    public func markResetPoint(users: [StoreWorld: [FixtureUser]] = [:]) async throws {
        await service.fixture.setPendingPoints(try service.worlds.worlds())
        for (world, list) in users { await service.fixture.setUsers(list, in: world) }
    }

    /// Makes the state of `world` now its reset point, with its people, and leaves every other world's point
    /// as it is: a world seeded while the emulator runs (`SharelaneEmulator.world()`).
    public func markResetPoint(of world: StoreWorld, users: [FixtureUser]) async {
        await service.fixture.setPendingPoints([world])
        await service.fixture.setUsers(users, in: world)
    }

    /// Puts worlds back to their reset points (a world never seeded is emptied), or, with `toEmpty`, empties
    /// them. Each waits for its requests under way; none sees half a reset. Answers the worlds reset.
    public func reset(container: String? = nil, environment: CloudKitEnvironment? = nil, toEmpty: Bool = false)
        async throws -> [StoreWorld]
    {
        let worlds = try await fixtureWorlds(container: container, environment: environment)
        let existing = Set(try service.worlds.worlds())
        for world in worlds {
            if await service.fixture.isPending(world) {
                // Nothing has changed it since serve started: it is at its reset point already.
                if !toEmpty { continue }
                try await service.takePendingResetPoint(world)
            }
            let point = toEmpty ? nil : await service.fixture.resetPoints[world]
            // A world the store does not hold is empty already, and is not made by resetting it.
            if point == nil && !existing.contains(world) { continue }
            try await service.gate.exclusively(world) {
                if let point {
                    try await service.worlds.restore(world, to: point)
                } else {
                    // A world in memory is let go whole, its memory and its place among the worlds freed.
                    try await service.worlds.empty(world)
                }
                await service.identities.forget(world)
            }
        }
        FreedMemory.giveBack()
        return worlds
    }

    /// Removes a world, or a container's two: its data, its reset point, its seeded people and its copies in
    /// named snapshots, so that its place under the store's limit on worlds and what it held are freed (a file
    /// store's world file is removed). Named again, it starts empty. Answers the worlds removed.
    /// - Throws: `BAD_REQUEST` for a container identifier that cannot be one, `NOT_FOUND` when the store
    ///   holds no such world and keeps nothing of it.
    public func removeWorlds(container: String, environment: CloudKitEnvironment? = nil) async throws -> [StoreWorld] {
        try Self.checkContainer(container)
        let named =
            environment.map { [StoreWorld(container: container, environment: $0)] }
            ?? CloudKitEnvironment.allCases.map { StoreWorld(container: container, environment: $0) }
        var removed: [StoreWorld] = []
        for world in named {
            let held = try await service.gate.exclusively(world) {
                let stored = try await service.worlds.remove(world)
                let kept = await service.fixture.forget(world)
                await service.identities.forget(world)
                await service.containers.forget(world)
                return stored || kept
            }
            if held { removed.append(world) }
        }
        FreedMemory.giveBack()
        guard !removed.isEmpty else {
            let what =
                environment.map { "\(container)/\(WireSpelling.environment($0))" }
                ?? "\(container) (in either environment)"
            throw ShareError(
                .notFound,
                "this store holds no world \(what), so nothing was removed: check the container's identifier "
                    + "and the environment (development or production)",
                subject: container)
        }
        return removed
    }

    /// Keeps the worlds as they are now under `name`, to go back to with `restoreSnapshot`.
    /// - Throws: `BAD_REQUEST` for a name that cannot be one, `QUOTA_EXCEEDED` past the limits on named
    ///   snapshots (`SnapshotLimits`).
    public func takeSnapshot(_ name: String, container: String? = nil, environment: CloudKitEnvironment? = nil)
        async throws -> [StoreWorld]
    {
        try Self.checkSnapshotName(name)
        let worlds = try await fixtureWorlds(container: container, environment: environment)
        var taken: [StoreWorld: any WorldSnapshot] = [:]
        for world in worlds {
            taken[world] = try await service.gate.exclusively(world) { try await service.worlds.snapshot(world) }
        }
        try await service.fixture.save(taken, named: name, within: service.configuration.snapshotLimits)
        return worlds
    }

    /// Forgets a named snapshot, freeing what it held.
    /// - Throws: `NOT_FOUND` for a name no snapshot has.
    public func deleteSnapshot(_ name: String) async throws {
        try Self.checkSnapshotName(name)
        guard await service.fixture.delete(named: name) else {
            throw ShareError(.notFound, "no snapshot is named \(name)", subject: name)
        }
    }

    /// Puts the worlds a snapshot holds (of those named) back as it holds them. Every one of them is checked
    /// first, so that a snapshot that cannot be restored changes no world.
    /// - Throws: `NOT_FOUND` for a name no snapshot has; `BAD_REQUEST` naming a world whose snapshot is not
    ///   sharelane's own store.
    public func restoreSnapshot(_ name: String, container: String? = nil, environment: CloudKitEnvironment? = nil)
        async throws -> [StoreWorld]
    {
        guard let kept = await service.fixture.named[name] else {
            throw ShareError(
                .notFound, "no snapshot is named \(name); take one with POST /_sharelane/snapshots/\(name)")
        }
        let wanted = Set(try await fixtureWorlds(container: container, environment: environment))
        let chosen = kept.sorted(by: { $0.key.description < $1.key.description }).filter {
            container == nil || wanted.contains($0.key)
        }
        for (world, snapshot) in chosen {
            do {
                try service.worlds.check(snapshot)
            } catch let error as ShareError {
                throw ShareError(
                    error.code, "\(world) of the snapshot \(name) cannot be restored: \(error.reason)",
                    subject: world.description)
            }
        }
        var restored: [StoreWorld] = []
        for (world, snapshot) in chosen {
            try await service.takePendingResetPoint(world)
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
            try Self.checkContainer(container)
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

    /// Puts every world of a snapshot file in place (worlds it does not hold are left as they are), all or
    /// none: the whole file is read and each world checked (its container, its base64, a database that opens
    /// read-only, passes SQLite's integrity check and has exactly sharelane's schema) before any is written,
    /// and the store then takes them together.
    /// - Throws: `BAD_REQUEST` naming the world at fault and what is wrong; the store is as it was.
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
        var snapshots: [(world: StoreWorld, snapshot: any WorldSnapshot)] = []
        for (index, entry) in file.worlds.enumerated() {
            let world = StoreWorld(container: entry.container, environment: entry.environment)
            let place = "world \(index + 1) of \(file.worlds.count) (\(world))"
            if let problem = StoreWorld.containerProblem(world.container) {
                throw ShareError(.badRequest, "\(place): \(problem)", subject: world.description)
            }
            guard let bytes = Data(base64Encoded: entry.database) else {
                throw ShareError(.badRequest, "\(place): its database is not base64", subject: world.description)
            }
            do {
                snapshots.append((world, try service.worlds.snapshot(serialized: bytes)))
            } catch let error as ShareError {
                throw ShareError(error.code, "\(place): \(error.reason)", subject: world.description)
            }
        }
        let worlds = snapshots.map(\.world).sorted { $0.description < $1.description }
        for world in worlds { try await service.takePendingResetPoint(world) }
        let all = snapshots
        try await exclusively(worlds[...]) {
            try await service.worlds.restore(all)
            for world in worlds { await service.identities.forget(world) }
        }
        for entry in file.worlds {
            let world = StoreWorld(container: entry.container, environment: entry.environment)
            if let users = entry.users { await service.fixture.setUsers(users, in: world) }
        }
    }

    /// Runs `body` with every one of `worlds` to itself, taken in the order given (sorted, so that two such
    /// calls never wait for each other's worlds).
    private func exclusively(_ worlds: ArraySlice<StoreWorld>, _ body: @escaping @Sendable () async throws -> Void)
        async throws
    {
        guard let first = worlds.first else { return try await body() }
        try await service.gate.exclusively(first) { try await exclusively(worlds.dropFirst(), body) }
    }

    /// The one check of a container a fixture call names (`StoreWorld.containerProblem`).
    static func checkContainer(_ container: String) throws {
        if let problem = StoreWorld.containerProblem(container) {
            throw ShareError(.badRequest, problem, subject: container)
        }
    }

    /// A snapshot's name goes in a URL path: letters, digits, `.`, `-` and `_`, not dots alone (`.` and `..`
    /// are a path's own).
    static func checkSnapshotName(_ name: String) throws {
        let allowed = name.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
                || "._-".unicodeScalars.contains($0)
        }
        guard !name.isEmpty, name.count <= 100, allowed, !name.allSatisfy({ $0 == "." }) else {
            throw ShareError(
                .badRequest,
                "\"\(name)\" cannot name a snapshot: use letters, digits, '.', '-' and '_' (at most 100), not dots alone"
            )
        }
    }
}
