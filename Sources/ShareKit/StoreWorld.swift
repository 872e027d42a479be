import Foundation

/// One CloudKit container in one environment: a world of its own, as on CloudKit, where each container
/// keeps its own users, databases, zones, records, shares, subscriptions, change feeds and assets, and a
/// container's production never sees what development holds.
public struct StoreWorld: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The container identifier, `iCloud.com.example.Lists`.
    public var container: String
    public var environment: CloudKitEnvironment

    /// The container of a recipe, or a store opened, that names none: a local one, never Apple's.
    public static let defaultContainer = "iCloud.local.sharelane"

    public init(container: String, environment: CloudKitEnvironment) {
        self.container = container
        self.environment = environment
    }

    /// `iCloud.com.example.Lists/development`, as paths and the console write it.
    public var description: String { "\(container)/\(environment.rawValue)" }

    /// The same container in another environment.
    public func inEnvironment(_ environment: CloudKitEnvironment) -> StoreWorld {
        StoreWorld(container: container, environment: environment)
    }

    /// What is wrong with a container identifier a request or a recipe gives, or nil. The one rule for every
    /// route and store: an identifier as CloudKit writes one, `iCloud.` and a reverse-DNS name
    /// (`iCloud.com.example.Lists`) whose parts, separated by `.`, are each one or more ASCII letters, digits
    /// and `-`; at most 255 bytes. It names a folder of a local store, so nothing else (`.git`, `-rf`, `..`)
    /// may become one (Docs/CloudKit.md, "Containers and environments").
    public static func containerProblem(_ container: String) -> String? {
        let example = "such as iCloud.com.example.Lists"
        if container.isEmpty { return "the container identifier is empty: give one \(example)" }
        if container.utf8.count > 255 { return "the container identifier is longer than 255 bytes" }
        let shown = container.unicodeScalars.count > 80 ? String(container.prefix(80)) + "…" : container
        guard container.hasPrefix(containerPrefix) else {
            return "the container identifier \"\(shown)\" does not start with \"iCloud.\": give one \(example)"
        }
        let parts = container.dropFirst(containerPrefix.count).split(separator: ".", omittingEmptySubsequences: false)
        let wellFormed = parts.allSatisfy { part in
            !part.isEmpty
                && part.unicodeScalars.allSatisfy {
                    ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
                }
        }
        guard wellFormed else {
            return "the container identifier \"\(shown)\" is not \"iCloud.\" and a reverse-DNS name: parts of "
                + "letters, digits and '-' separated by single dots, none empty (\(example))"
        }
        return nil
    }

    /// What every container identifier starts with.
    static let containerPrefix = "iCloud."
}

/// Every world a local store keeps: one store per container and environment, opened when first named.
///
/// `sharelane serve` answers each request from the world its path names, so two apps' test suites, or a
/// rehearsal of a schema deploy, see what separate containers and environments would.
public protocol StoreWorlds: Sendable {
    /// `sqlite:.sharelane/store.sqlite`, `memory:`.
    var displayName: String { get }
    /// The store of one world, created empty when it is first named.
    /// - Throws: `ShareError` (`BAD_REQUEST`) for a container identifier that cannot be one
    ///   (`StoreWorld.containerProblem`), or when the world's store cannot be opened.
    func store(for world: StoreWorld) throws -> any Store
    /// The worlds that exist, in a stable order (container, then development before production).
    func worlds() throws -> [StoreWorld]
    /// A copy of one world as it is now, to go back to (`restore`), or to write to a file (`serialized`).
    func snapshot(_ world: StoreWorld) async throws -> any WorldSnapshot
    /// Puts a world back as `snapshot` holds it, in one step: a reader sees it before or after, never half.
    /// Change tokens handed out before are refused afterwards (a new epoch), never read as "nothing changed".
    /// - Throws: `ShareError` (`BAD_REQUEST`) for a snapshot of another kind of store.
    func restore(_ world: StoreWorld, to snapshot: any WorldSnapshot) async throws
    /// Puts several worlds in place together, all or none: every snapshot is checked first, and a failure
    /// leaves every world as it was (`serve --import`).
    /// - Throws: `ShareError` naming the world at fault and why.
    func restore(_ snapshots: [(world: StoreWorld, snapshot: any WorldSnapshot)]) async throws
    /// Checks that a snapshot can be restored: a database of this kind of store, whole, with exactly the
    /// store's own schema.
    /// - Throws: `ShareError` (`BAD_REQUEST`) saying what is wrong.
    func check(_ snapshot: any WorldSnapshot) throws
    /// A snapshot read back from what `WorldSnapshot.serialized` wrote.
    /// - Throws: `ShareError` (`BAD_REQUEST`) when the bytes are not such a snapshot.
    func snapshot(serialized: Data) throws -> any WorldSnapshot
    /// Empties a world, freeing what it held: a world in memory is let go whole (named again, it starts as a
    /// new one, as empty), so its memory and its place under the store's limit on worlds are freed.
    func empty(_ world: StoreWorld) async throws
    /// Removes a world: its data, its place under the store's limit on worlds, and its memory or its file.
    /// Named again, it starts empty. Answers false when the store holds no such world.
    func remove(_ world: StoreWorld) async throws -> Bool
}

/// One world at a moment (`StoreWorlds.snapshot`).
public protocol WorldSnapshot: Sendable {
    /// The snapshot as bytes: for the embedded store, a SQLite database file.
    func serialized() throws -> Data
    /// About how many bytes the snapshot holds in memory, for the limits on named snapshots.
    var byteCount: Int { get }
}
