import Foundation
import Recipe

/// The text of `sharelane lanes`: each lane with its description.
public enum LaneListing {
    /// One line per lane, names aligned; private lanes are left out unless `includePrivate`, then marked.
    public static func text(of recipe: Recipe, includePrivate: Bool) -> String {
        let lanes = recipe.lanes.filter { includePrivate || !$0.isPrivate }
        let hidden = recipe.lanes.count - lanes.count
        var lines = ["Lanes of \(recipe.name) (\(recipe.file)):"]
        if lanes.isEmpty {
            lines.append("  (none)")
        }
        let width = lanes.map(\.name.count).max() ?? 0
        for lane in lanes {
            let name = lane.name.padding(toLength: width, withPad: " ", startingAt: 0)
            var desc = lane.desc ?? ""
            if lane.isPrivate { desc = "(private) " + desc }
            lines.append("  \(name)  \(desc)".trimmingTrailingSpaces())
        }
        if hidden > 0 {
            lines.append(
                "\(hidden) private lane\(hidden == 1 ? "" : "s") hidden (callable only from other lanes); --all lists them."
            )
        }
        lines.append("Run one with: sharelane run LANE \(recipe.file)")
        return lines.joined(separator: "\n")
    }
}

extension LaneListing {
    private struct Entry: Encodable {
        var name: String
        var desc: String?
        var `private`: Bool
    }

    /// The lanes as a JSON array of `{name, desc, private}`, for scripts and tests.
    /// - Throws: an `EncodingError` (not expected for these plain values).
    public static func json(of recipe: Recipe, includePrivate: Bool) throws -> String {
        let entries = recipe.lanes.filter { includePrivate || !$0.isPrivate }.map {
            Entry(name: $0.name, desc: $0.desc, private: $0.isPrivate)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(entries), as: UTF8.self)
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var s = self
        while s.hasSuffix(" ") { s.removeLast() }
        return s
    }
}
