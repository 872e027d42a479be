import Foundation
import SharelaneTestSupport

/// A lane as `sharelane lanes --json` lists it.
struct ListedLane: Decodable, CustomStringConvertible {
    var name: String
    var desc: String?
    var `private`: Bool
    var description: String { name }
}

extension SharelaneBinary {
    /// Every lane of a recipe, read through `sharelane lanes --json --all`.
    ///
    /// - Throws: when the command fails or prints something else.
    static func lanes(of recipe: String) async throws -> [ListedLane] {
        let result = try await run(["lanes", recipe, "--all", "--json"])
        guard result.status == 0 else {
            throw FixtureError(message: "sharelane lanes \(recipe) exited \(result.status): \(result.output)")
        }
        return try JSONDecoder().decode([ListedLane].self, from: Data(result.stdout.utf8))
    }
}
