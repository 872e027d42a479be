import ArgumentParser
import Crypto
import Foundation
import Planner
import Recipe

extension PlanCache.Refresh: ExpressibleByArgument {}

/// `--refresh incremental|full`: whether a plan reads only the zones that changed since the last plan, and
/// where that plan's cache file is kept (Docs/Plans.md, "Incremental plans").
struct RefreshOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "incremental (default): read only the zones that changed since the last plan; full: read every zone.",
            discussion:
                "Changes made behind sharelane's back are found either way: the store's change feed names them.",
            valueName: "mode"))
    var refresh: PlanCache.Refresh = .incremental

    /// The cache for planning the recipe at `recipePath` against the store at `storeURL`: beside an embedded
    /// store (`.sharelane/plan-cache/` for `.sharelane/store.sqlite`), in the user's cache directory for
    /// `http:` and `cloudkit:` stores, none for `memory:` (nothing outlives the process). One file per recipe
    /// file, variables (`--var`, `--var-file`, `--env`), working directory and store; the file itself says which owner and store
    /// it is for, and what the recipe was made from.
    /// - Throws: as `RecipeSelection.overrides()`.
    func cache(storeURL: String, recipePath: String, selection: RecipeSelection) throws -> PlanCache? {
        let directory: URL
        switch try? StoreLocator.location(of: storeURL) {
        case .sqlite(let path)?:
            directory = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("plan-cache")
        case .http?, .cloudKit?:
            directory = Self.userCacheDirectory().appendingPathComponent("plan-cache")
        case .memory?, nil:
            return nil
        }
        let recipeFile = URL(fileURLWithPath: recipePath).standardizedFileURL
        let variables = try selection.overrides().sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        // The working directory too: the recipe remembered keeps its path as given.
        let key =
            ([
                storeURL, recipeFile.path, FileManager.default.currentDirectoryPath, selection.envName ?? "",
            ] + variables).joined(separator: "\u{0}")
        let digest = SHA256.hash(data: Data(key.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
        let safeName = String(
            recipeFile.deletingPathExtension().lastPathComponent.map {
                $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_"
            }.prefix(40))
        return PlanCache(file: directory.appendingPathComponent("\(safeName)-\(digest).json"), refresh: refresh)
    }

    /// `$XDG_CACHE_HOME/sharelane`, else `~/Library/Caches/sharelane` on macOS and `~/.cache/sharelane`
    /// elsewhere.
    static func userCacheDirectory() -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("sharelane")
        }
        let home = FileManager.default.homeDirectoryForCurrentUser
        #if os(macOS)
            return home.appendingPathComponent("Library/Caches/sharelane")
        #else
            return home.appendingPathComponent(".cache/sharelane")
        #endif
    }
}
