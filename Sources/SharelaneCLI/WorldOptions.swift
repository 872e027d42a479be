import ArgumentParser
import Foundation
import Logging
import Recipe
import ShareKit
import ShareStoreSQLite

/// `--container` and `--environment` for the commands that read a store: which of its worlds (a container in
/// an environment) to read. Defaults: the recipe's, else the one the store file holds first.
struct WorldOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The container to read (default: the recipe's, else the one the store holds).", valueName: "container"))
    var container: String?

    @Option(
        name: .customLong("environment"),
        help: ArgumentHelp("development or production (default: the recipe's, else development).", valueName: "name"))
    var environment: CloudKitEnvironment?

    func validate() throws {
        if let container, let problem = StoreWorld.containerProblem(container) {
            throw ValidationError("--container \(container): \(problem)")
        }
    }

    /// Where the world read was chosen, for the messages that name it.
    func source(recipe: Recipe?) -> String {
        if container != nil { return "--container" }
        if let recipe { return "the container of \(recipe.file)" }
        return "the first the store holds"
    }

    /// What to add to a message about a world that is empty, or lacks what was asked for, when the store holds
    /// other worlds: the world read, why that one, and the others with the option that reads one. Empty when
    /// the store holds no other (or cannot list them).
    func otherWorldsHint(_ store: any Store, recipe: Recipe?, storeURL: String) -> String {
        guard let local = store as? any LocalWorldStore,
            case .sqlite(let path)? = try? StoreLocator.location(of: storeURL), StoreFile.kind(at: path) == .sharelane,
            let worlds = try? EmbeddedStore.worlds(path: path, logger: Logger(label: "sharelane.worlds")).worlds()
        else { return "" }
        let others = worlds.filter { $0 != local.world }.map { "\($0.container)/\($0.environment.rawValue)" }.sorted()
        guard !others.isEmpty else { return "" }
        let current = "\(local.world.container)/\(local.world.environment.rawValue)"
        let first = others[0].split(separator: "/").map(String.init)
        return " (read \(current), \(source(recipe: recipe)); the store also holds "
            + others.prefix(5).joined(separator: ", ") + (others.count > 5 ? " and \(others.count - 5) more" : "")
            + ": read one with --container \(first[0])"
            + (first.count > 1 && first[1] != "development" ? " --environment \(first[1])" : "") + ")"
    }
}
