import Foundation

/// Actions from outside, found as git finds its subcommands: an executable `sharelane-NAME` in the recipe's
/// `actions/` folder, or on `PATH` (the recipe's folder first). A lane step named `NAME` that is not built in
/// runs it.
public enum OutsideActions {
    /// The prefix of an outside action's executable.
    public static let prefix = "sharelane-"

    /// An outside action found: its name and its executable.
    public struct Found: Sendable, Hashable {
        public var name: String
        public var executable: URL
    }

    /// The folders searched, in order: the recipe's `actions/`, then `PATH`'s.
    public static func folders(
        recipeDirectory: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [URL] {
        var folders: [URL] = []
        if let recipeDirectory {
            folders.append(URL(fileURLWithPath: recipeDirectory).appendingPathComponent("actions"))
        }
        for part in (environment["PATH"] ?? "").split(separator: ":") where !part.isEmpty {
            folders.append(URL(fileURLWithPath: String(part)))
        }
        return folders
    }

    /// The executable of the action `name`, or nil when no folder has one.
    public static func executable(
        named name: String, recipeDirectory: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL? {
        guard !name.isEmpty, !name.contains("/") else { return nil }
        for folder in folders(recipeDirectory: recipeDirectory, environment: environment) {
            let candidate = folder.appendingPathComponent(prefix + name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Every outside action found, by name (the first folder's wins), in name order.
    public static func found(
        recipeDirectory: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [Found] {
        var byName: [String: URL] = [:]
        for folder in folders(recipeDirectory: recipeDirectory, environment: environment) {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            for file in names where file.hasPrefix(prefix) && file.count > prefix.count {
                let name = String(file.dropFirst(prefix.count))
                let url = folder.appendingPathComponent(file)
                guard byName[name] == nil, FileManager.default.isExecutableFile(atPath: url.path) else { continue }
                byName[name] = url
            }
        }
        return byName.keys.sorted().compactMap { name in byName[name].map { Found(name: name, executable: $0) } }
    }
}
