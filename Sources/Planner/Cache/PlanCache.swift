import Foundation
import PlanModel
import Recipe

/// Where a planner keeps what it learned from the last plan, so that the next plan re-reads only the zones
/// that changed since (Docs/Plans.md, "Incremental plans").
///
/// The file holds, for each zone that planned to no changes, a digest of what the plan of that zone depended
/// on (the declared zone, the users, the options) and what the plan took from the store (the change tags, the
/// shares, the notes), with the store's change token from before the zones were read. The next plan asks the
/// store's change feed what changed since that token; a zone that did not change, whose declaration did not
/// change, is planned from the file without being read. Anything else (a changed zone, a zone created or
/// deleted, a token the store refuses, another store or owner, an unreadable file) is read from the store.
public struct PlanCache: Sendable, Hashable, Codable {
    /// Whether a plan may use what the file holds.
    public enum Refresh: String, Sendable, Hashable, Codable, CaseIterable {
        /// Read the zones that changed since the last plan; plan the others from the file.
        case incremental
        /// Read every zone (the file is written again for the next plan).
        case full
    }

    /// The file, one per recipe, owner, store, container and environment.
    public var file: URL
    public var refresh: Refresh

    public init(file: URL, refresh: Refresh = .incremental) {
        self.file = file
        self.refresh = refresh
    }

    /// The recipe the file's last plan loaded, when the files and environment variables it was made from are
    /// unchanged since (`RecipeInputs.isCurrent`): a plan of it can come from the file and the store's change
    /// feeds without loading it (`Planner.plan(_:options:load:)`). nil with `--refresh full`, without a file,
    /// or when anything it was made from changed.
    public func unchangedRecipe(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> UnchangedRecipe?
    {
        guard refresh == .incremental, let memo = PlanMemo.load(file), let remembered = memo.recipe,
            remembered.inputs.isCurrent(environment: environment)
        else { return nil }
        return UnchangedRecipe(memo: memo)
    }
}

/// A recipe as a plan's cache file remembers it, its files unchanged since (`PlanCache.unchangedRecipe`).
public struct UnchangedRecipe: Sendable {
    let memo: PlanMemo

    /// The recipe without its zones' records (which stay in the cache until a plan needs them): its name,
    /// container, environment, users, zones, public records, lanes and warnings.
    public var recipe: Recipe { memo.recipe?.header ?? Recipe(name: "", file: "", users: [], owner: "") }
}
