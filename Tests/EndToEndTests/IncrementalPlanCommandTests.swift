import Foundation
import SharelaneTestSupport
import Testing

/// Incremental plans from the command line: the cache file beside an embedded store or in the user's cache
/// directory, what it saves, and `--refresh full`.
@Suite final class IncrementalPlanCommandTests {
    let scratch: TemporaryDirectory
    var directory: URL { scratch.url }

    init() throws {
        scratch = try TemporaryDirectory("e2e")
    }

    /// The debug line that says how many zones a plan took from the cache.
    static func fromCache(_ result: SharelaneBinary.Result) -> String? {
        result.stderr.split(separator: "\n").first { $0.contains("from the cache)") }.map {
            String($0.drop { $0 != "(" })
        }
    }

    @Test func aSecondPlanOnTheEmbeddedStoreReadsOnlyWhatChanged() async throws {
        let store = "sqlite:" + scratch.file("data/store.sqlite")
        let demo = try await SharelaneBinary.run(["run", "demo", "Recipes/sharelane.yaml", "--store", store])
        #expect(demo.status == 0, "\(demo.output)")
        let plan = ["plan", "Recipes/sharelane.yaml", "--store", store, "--log-level", "debug"]
        _ = try await SharelaneBinary.run(plan)
        let second = try await SharelaneBinary.run(plan)
        #expect(second.status == 0)
        #expect(second.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."))
        #expect(Self.fromCache(second) == "(3 store calls, 2 zones from the cache)", "\(second.stderr)")
        // One cache file, named after the recipe's file.
        let cacheFiles = try FileManager.default.contentsOfDirectory(atPath: scratch.file("data/plan-cache")).filter {
            $0.hasSuffix(".json")
        }
        #expect(cacheFiles.count == 1 && cacheFiles[0].hasPrefix("sharelane-"), "\(cacheFiles)")
        let full = try await SharelaneBinary.run(plan + ["--refresh", "full"])
        #expect(Self.fromCache(full) == "(5 store calls, 0 zones from the cache)", "\(full.stderr)")
    }

    @Test("over http:, the cache lives in the user's cache directory and still finds a participant's change")
    func overHTTP() async throws {
        let server = try await ServeProcess()
        defer { server.stop() }
        let cacheHome = scratch.file("cache-home")
        let environment = ["CLOUDKIT_API_TOKEN": server.apiToken, "XDG_CACHE_HOME": cacheHome]
        func run(_ arguments: [String]) async throws -> SharelaneBinary.Result {
            try await SharelaneBinary.run(arguments + ["--store", server.url], environment: environment)
        }
        let demo = try await run(["run", "demo", "Recipes/sharelane.yaml"])
        #expect(demo.status == 0, "\(demo.output)")
        let plan = ["plan", "Recipes/sharelane.yaml", "--log-level", "debug"]
        _ = try await run(plan)
        let second = try await run(plan)
        #expect(Self.fromCache(second) == "(3 store calls, 2 zones from the cache)", "\(second.stderr)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: cacheHome + "/sharelane/plan-cache").filter {
                $0.hasSuffix(".json")
            }.count == 1)
        // Dana leaves the family lists behind the recipe's back: the next plan reads that zone and invites her
        // again.
        let recipe = try String(
            contentsOf: BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml"), encoding: .utf8)
        let withLane =
            recipe + "\n  dana-leaves:\n    steps:\n      - leave: { as: dana, zone: FamilyLists }\n"
        try withLane.write(toFile: scratch.file("leave.yaml"), atomically: true, encoding: .utf8)
        let left = try await run(["run", "dana-leaves", scratch.file("leave.yaml")])
        #expect(left.status == 0, "\(left.output)")
        let third = try await run(plan)
        #expect(third.stdout.contains("participant FamilyLists/dana"), "\(third.stdout)")
        #expect(Self.fromCache(third) == "(4 store calls, 1 zone from the cache)", "\(third.stderr)")
    }
}
