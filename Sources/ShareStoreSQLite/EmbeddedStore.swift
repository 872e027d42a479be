import Logging
import ShareKit

/// Makes the embedded store (`sqlite:PATH`, `memory:`) and its worlds: the command line, `serve` and the
/// fixture open local stores here, and hold them by capability (`LocalWorldStore`, `StoreWorlds`), never by
/// their type.
public enum EmbeddedStore {
    /// Opens (or creates) the world of the store file at `path`. With no `container`, the container the file
    /// holds (or, for a new file, the default one).
    /// - Throws: when the file cannot be created or opened, or holds a schema newer than this sharelane.
    public static func open(
        path: String, container: String? = nil, environment: CloudKitEnvironment = .development, logger: Logger
    ) throws -> any LocalWorldStore {
        try SQLiteStore(path: path, container: container, environment: environment, logger: logger)
    }

    /// A store in memory (`memory:`), gone when released.
    /// - Throws: when the schema cannot be made.
    public static func inMemory(
        container: String = StoreWorld.defaultContainer, environment: CloudKitEnvironment = .development,
        logger: Logger
    ) throws -> any LocalWorldStore {
        try SQLiteStore.inMemory(container: container, environment: environment, logger: logger)
    }

    /// Every world of the store file at `path`, each opened when first named.
    /// - Throws: when the file cannot be created or opened.
    public static func worlds(path: String, limits: WorldLimits = .standard, logger: Logger) throws
        -> any StoreWorlds
    {
        try SQLiteWorlds(path: path, limits: limits, logger: logger)
    }

    /// Worlds in memory (`memory:`), gone when released.
    public static func worldsInMemory(limits: WorldLimits = .standard, logger: Logger) -> any StoreWorlds {
        SQLiteWorlds(inMemoryWith: logger, limits: limits)
    }

    /// The world the store file at `path` holds as its own, and every world it holds; nil when the file
    /// cannot be opened or listed, or no world has claimed it yet (a file written before containers were
    /// kept apart).
    public static func claimedWorlds(path: String, logger: Logger) -> (home: StoreWorld, worlds: [StoreWorld])? {
        guard let worlds = try? SQLiteWorlds(path: path, logger: logger), let home = worlds.homeWorld,
            let known = try? worlds.worlds()
        else { return nil }
        return (home, known)
    }
}
