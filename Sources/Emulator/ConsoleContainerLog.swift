import CloudKitWire
import ShareKit

/// The containers and environments that Web Services requests named, for the console's overview.
///
/// Each container and environment is a world of its own (`StoreWorlds`); this counts the requests each was
/// named in, beside the worlds the store keeps.
actor ConsoleContainerLog {
    /// A container and environment, and how many database requests named them.
    struct Entry: Sendable, Hashable {
        var container: String
        var environment: String
        var requests: Int
    }

    private var counts: [String: Entry] = [:]
    /// Paths are chosen by clients; a few hundred distinct ones are plenty for a page.
    private let limit = 500

    func record(container: String, environment: String) {
        let key = "\(container)\u{0}\(environment)"
        if counts[key] == nil, counts.count >= limit { return }
        counts[key, default: Entry(container: container, environment: environment, requests: 0)].requests += 1
    }

    /// Forgets a world removed, so that the overview no longer lists it and the place it took goes to another.
    func forget(_ world: StoreWorld) {
        counts["\(world.container)\u{0}\(WireSpelling.environment(world.environment))"] = nil
    }

    /// Every pair seen, by container then environment.
    func entries() -> [Entry] {
        counts.values.sorted { ($0.container, $0.environment) < ($1.container, $1.environment) }
    }
}
