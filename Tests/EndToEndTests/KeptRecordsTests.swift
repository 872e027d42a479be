import Foundation
import SharelaneTestSupport
import Testing

/// A record taken out of the recipe is kept in its zone, and every plan format names it, the plan made from
/// the cache file too: a reviewer knows which record, and that it is not deleted.
@Suite struct KeptRecordsTests {
    static let recipe = """
        sharelane: 1
        name: households
        users: { ann: { email: ann@example.com } }
        owner: ann
        zones:
          SmithHousehold:
            records:
              groceries: { type: List, fields: { title: Groceries } }
              pharmacy: { type: List, fields: { title: Pharmacy } }

        """

    @Test func everyFormatNamesTheRecordsItKeeps() async throws {
        let scratch = try TemporaryDirectory("e2e-kept")
        let recipe = try scratch.write("households.yaml", Self.recipe)
        let store = ["--store", scratch.file("households.sqlite")]
        let cache = ["XDG_CACHE_HOME": scratch.file("cache")]
        #expect(try await SharelaneBinary.run(["apply", recipe, "--yes"] + store, environment: cache).status == 0)
        _ = try scratch.write(
            "households.yaml",
            Self.recipe.replacingOccurrences(
                of: "      pharmacy: { type: List, fields: { title: Pharmacy } }\n", with: ""))
        let note = "1 undeclared record kept in SmithHousehold: pharmacy; --prune deletes it."
        for (format, attempt) in [("text", 1), ("text", 2), ("markdown", 1), ("json", 1)] {
            let plan = try await SharelaneBinary.run(["plan", recipe, "--format", format] + store, environment: cache)
            #expect(plan.status == 0, "\(format): \(plan.output)")
            #expect(plan.stdout.contains(note), "\(format), plan \(attempt): \(plan.stdout)")
        }
    }
}
