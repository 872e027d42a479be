/// How many worlds one local store holds, and how many of a file store's it keeps open at once.
public struct WorldLimits: Sendable, Hashable {
    /// Worlds a store may hold: a request that would make one more is refused with `QUOTA_EXCEEDED`, and
    /// the store keeps answering for the worlds it has (Docs/CloudKit.md, "Containers and environments").
    public var worlds: Int
    /// World files kept open at once: the least recently used is closed when another opens, and opened
    /// again when next asked for. Each open world holds about five file descriptors (the database, its
    /// write-ahead log and shared memory, a reader's own), so 16 keep a store under 100 of them.
    public var openWorlds: Int

    /// 500 worlds, 16 open: room for every test worker of a suite, one container (and two environments)
    /// each, within a process's default 256 or 1,024 file descriptors.
    public static let standard = WorldLimits(worlds: 500, openWorlds: 16)

    public init(worlds: Int, openWorlds: Int) {
        self.worlds = max(1, worlds)
        self.openWorlds = max(1, openWorlds)
    }
}
