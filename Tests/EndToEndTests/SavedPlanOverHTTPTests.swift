import Foundation
import SharelaneTestSupport
import Testing

/// `sharelane plan --out` then `sharelane apply FILE` against a real `sharelane serve`, as two processes: the
/// apply holds no tokens of its own and knows the recipe only from the plan.
@Suite("Saved plans over http: (sharelane serve)")
struct SavedPlanOverHTTPTests {
    static let recipe = """
        sharelane: 1
        name: lists
        container: iCloud.com.example.Lists
        users: { ann: { email: ann@example.com }, bob: { email: bob@example.com } }
        owner: ann
        zones:
          Lists:
            share: { participants: { bob: read-write } }
            records:
              groceries: { type: List, fields: { title: Groceries } }
        """

    @Test(
        "a plan saved before its owner existed applies over http: (it once failed listing zones with \"no web auth token for user\"), in the recipe's container; a second one, stale since the owner was created, is refused"
    )
    func savedPlanOfANewOwner() async throws {
        let scratch = try TemporaryDirectory("e2e-saved-http")
        let recipe = try scratch.write("lists.yaml", Self.recipe)
        let server = try await ServeProcess()
        defer { server.stop() }
        let cache = ["XDG_CACHE_HOME": scratch.file("cache")]
        let first = scratch.file("first.json")
        let second = scratch.file("second.json")
        for file in [first, second] {
            let saved = try await server.run(["plan", "--out", file, recipe], environment: cache)
            #expect(saved.status == 0, "\(saved.output)")
        }

        let apply = try await server.run(["apply", "--yes", first], environment: cache)
        #expect(apply.status == 0, "\(apply.output)")
        #expect(!apply.output.contains("no web auth token"), "\(apply.output)")
        #expect(apply.stdout.contains("Apply complete! Resources: 4 added, 0 changed, 0 destroyed."), "\(apply.output)")
        #expect(
            !server.log.contains("/database/1/iCloud.local.sharelane/"),
            "the saved plan's apply addresses the recipe's container:\n\(server.log)")
        let plan = try await server.run(["plan", "--detailed-exitcode", recipe], environment: cache)
        #expect(plan.status == 0, "the recipe plans to no changes after the saved plan's apply:\n\(plan.output)")

        let stale = try await server.run(["apply", "--yes", second], environment: cache)
        #expect(stale.status == 1, "\(stale.output)")
        #expect(stale.stderr.contains("user ann (ann@example.com) was created"), "\(stale.output)")
    }
}
