import Foundation
import SharelaneTestSupport
import Testing

/// Lanes through `sharelane serve`: the runner speaks only the `Store` protocol, so the same lanes work
/// over the CloudKit Web Services client.
@Suite("Lanes over http: (sharelane serve)")
struct LaneOverHTTPTests {
    /// Known failures over http:, with the reason; the test still runs them and records the failure as known.
    static let knownFailures: [String: String] = [:]

    @Test("plan and apply over http: address the recipe's container and environment")
    func planAndApplyUseTheRecipeContainer() async throws {
        let server = try await ServeProcess()
        defer { server.stop() }
        let recipe = BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml").path
        let plan = try await server.run(["plan", recipe])
        #expect(plan.status == 0, "\(plan.output)")
        let apply = try await server.run(["apply", "--yes", recipe])
        #expect(apply.status == 0, "\(apply.output)")
        let paths = server.log.split(separator: "\n").compactMap { line in
            line.range(of: "/database/1/").map { String(line[$0.lowerBound...]) }
        }
        #expect(paths.count > 2)
        #expect(paths.allSatisfy { $0.hasPrefix("/database/1/iCloud.com.example.Lists/development/") }, "\(paths)")
    }

    @Test("every lane of every recipe runs over http:", arguments: try await RecipeLane.all())
    func laneRunsOverHTTP(_ item: RecipeLane) async throws {
        let server = try await ServeProcess()
        defer { server.stop() }
        let result = try await server.run(["run", item.lane, item.recipe])
        if let reason = Self.knownFailures[item.testDescription] {
            withKnownIssue(Comment(rawValue: reason), isIntermittent: true) {
                #expect(result.status == 0, "\(result.output)")
            }
            return
        }
        #expect(result.status == 0, "\(item.testDescription) over http:\n\(result.output)")
        #expect(result.stdout.contains("✔ lane \(item.lane) succeeded"), "\(result.output)")
    }

    @Test("a lane's reset empties the recipe's container in serve through POST /_sharelane/reset")
    func resetEmptiesTheContainerInServe() async throws {
        let scratch = try TemporaryDirectory("e2e")
        let directory = scratch.url
        let recipe = directory.appendingPathComponent("wipe.yaml")
        try """
        sharelane: 1
        name: wipe
        users:
          ann: { email: ann@example.com }
          ben: { email: ben@example.com }
        owner: ann
        zones:
          Box:
            share: { participants: { ben: read-write } }
            records:
              item: { type: Thing, fields: { title: Item } }
        lanes:
          wipe:
            steps:
              - reset
              - apply
              - save: { as: ben, zone: Box, record: extra, type: Thing, fields: { title: Extra } }
              - expect: { as: ann, records: 2, zone: Box }
              - reset
              - apply
              - accept: { as: ben, zone: Box }
              - expect: { as: ben, records: 1, zone: Box }
        """.write(to: recipe, atomically: true, encoding: .utf8)
        let server = try await ServeProcess()
        defer { server.stop() }

        // Twice: the second run starts from what the first left, and its reset empties it.
        for _ in 0..<2 {
            let result = try await server.run(["run", "wipe", recipe.path])
            #expect(result.status == 0, "\(result.output)")
            #expect(
                result.stdout.contains("✔ reset — emptied iCloud.local.sharelane in development"), "\(result.output)")
        }
        #expect(server.log.components(separatedBy: "POST /_sharelane/reset 200").count == 5, "\(server.log)")
    }
}
