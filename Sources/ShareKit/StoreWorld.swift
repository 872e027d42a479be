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

    /// What is wrong with a container identifier a request or a recipe gives, or nil: it must be non-empty,
    /// at most 255 bytes, and of letters, digits, `.`, `-` and `_` (CloudKit's identifiers are reverse DNS
    /// names such as `iCloud.com.example.Lists`); it names a folder of a local store, so `.` and `..` are
    /// refused too.
    public static func containerProblem(_ container: String) -> String? {
        if container.isEmpty { return "the container identifier is empty" }
        if container.utf8.count > 255 { return "the container identifier is longer than 255 bytes" }
        if container == "." || container == ".." { return "\"\(container)\" is not a container identifier" }
        let allowed = container.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "." || $0 == "-"
                || $0 == "_"
        }
        if !allowed {
            return "the container identifier \"\(container)\" may hold only letters, digits, '.', '-' and '_'"
        }
        return nil
    }
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
    /// A snapshot read back from what `WorldSnapshot.serialized` wrote.
    /// - Throws: `ShareError` (`BAD_REQUEST`) when the bytes are not such a snapshot.
    func snapshot(serialized: Data) throws -> any WorldSnapshot
}

/// One world at a moment (`StoreWorlds.snapshot`).
public protocol WorldSnapshot: Sendable {
    /// The snapshot as bytes: for the embedded store, a SQLite database file.
    func serialized() throws -> Data
}
