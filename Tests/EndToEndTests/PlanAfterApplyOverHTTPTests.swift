import Foundation
import SharelaneTestSupport
import Testing

/// The plan right after an apply through `sharelane serve`: the apply leaves the plan's cache file as the store
/// holds it, so that plan reads only the change feed, as the one after it does (Docs/Plans.md, "After an
/// apply").
@Suite struct PlanAfterApplyOverHTTPTests {
    /// The debug line that says how many zones a plan took from the cache.
    static func fromCache(_ result: SharelaneBinary.Result) -> String? {
        result.stderr.split(separator: "\n").first { $0.contains("from the cache)") }.map {
            String($0.drop { $0 != "(" })
        }
    }

    /// The `changes/zone` requests in a stretch of serve's log.
    static func zoneFeedRequests(_ log: Substring) -> Int {
        log.split(separator: "\n").count { $0.contains("/changes/zone") }
    }

    /// sharelane run against `server`, with a plan cache of its own in `scratch`.
    static func sharelane(against server: ServeProcess, cacheIn scratch: TemporaryDirectory)
        -> ([String]) async throws -> SharelaneBinary.Result
    {
        let environment = ["CLOUDKIT_API_TOKEN": server.apiToken, "XDG_CACHE_HOME": scratch.file("cache")]
        return { try await SharelaneBinary.run($0 + ["--store", server.url], environment: environment) }
    }

    @Test("the first plan after an apply takes every zone from the cache, reading no zone's feed")
    func firstPlanAfterApply() async throws {
        let server = try await ServeProcess()
        defer { server.stop() }
        let scratch = try TemporaryDirectory("after-apply")
        let run = Self.sharelane(against: server, cacheIn: scratch)
        let applied = try await run(["apply", "Recipes/sharelane.yaml", "--yes"])
        #expect(applied.status == 0, "\(applied.output)")
        let plan = ["plan", "Recipes/sharelane.yaml", "--log-level", "debug", "--detailed-exitcode"]
        let before = server.log.count
        let first = try await run(plan)
        let firstLog = server.log.dropFirst(before)
        #expect(first.status == 0, "the apply converged: \(first.output)")
        #expect(Self.fromCache(first) == "(3 store calls, 2 zones from the cache)", "\(first.stderr)")
        #expect(Self.zoneFeedRequests(firstLog) == 0, "\(firstLog)")
        let second = try await run(plan)
        #expect(Self.fromCache(second) == Self.fromCache(first), "\(second.stderr)")

        // A change behind sharelane's back after the apply is still found: the cache only says what the store
        // held when the apply ended.
        let recipe = try String(
            contentsOf: BuiltProducts.packageRoot.appendingPathComponent("Recipes/sharelane.yaml"), encoding: .utf8)
        let withLane = recipe + "\n  dana-leaves:\n    steps:\n      - leave: { as: dana, zone: FamilyLists }\n"
        try withLane.write(toFile: scratch.file("leave.yaml"), atomically: true, encoding: .utf8)
        let left = try await run(["run", "dana-leaves", scratch.file("leave.yaml")])
        #expect(left.status == 0, "\(left.output)")
        let third = try await run(plan)
        #expect(third.status == 2, "\(third.output)")
        #expect(third.stdout.contains("participant FamilyLists/dana"), "\(third.stdout)")
    }

    @Test("a share several participants accept at once is taken from the cache by the next plan, as the store wrote it")
    func shareAcceptedInSeveralRequests() async throws {
        let server = try await ServeProcess()
        defer { server.stop() }
        let scratch = try TemporaryDirectory("after-accepts")
        let run = Self.sharelane(against: server, cacheIn: scratch)
        let people = ["bob", "carol", "dana", "erin", "frank", "gina"]
        let recipe = try scratch.write(
            "club.yaml",
            """
            sharelane: 1
            name: club
            users:
              alice: { email: alice@example.com }
            \(people.map { "  \($0): { email: \($0)@example.com }" }.joined(separator: "\n"))
            owner: alice
            zones:
            \((1...3).map { zone in
                "  Club\(zone):\n    share:\n      participants:\n"
                    + people.map { "        \($0): read-write" }.joined(separator: "\n")
                    + "\n    records:\n      notice: { type: Note, fields: { title: Zone \(zone) } }"
            }.joined(separator: "\n"))
            """)
        let applied = try await run(["apply", recipe, "--yes"])
        #expect(applied.status == 0, "\(applied.output)")
        let plan = ["plan", recipe, "--log-level", "debug", "--detailed-exitcode"]
        let before = server.log.count
        let first = try await run(plan)
        let firstLog = server.log.dropFirst(before)
        #expect(first.status == 0, "the apply converged: \(first.output)")
        #expect(Self.fromCache(first)?.hasSuffix("3 zones from the cache)") == true, "\(first.stderr)")
        #expect(Self.zoneFeedRequests(firstLog) == 0, "\(firstLog)")

        // What the cache keeps of each share is what the store holds: one participant leaving behind
        // sharelane's back is still found.
        try """
        \(String(contentsOfFile: recipe, encoding: .utf8))
        lanes:
          gina-leaves:
            steps:
              - leave: { as: gina, zone: Club2 }
        """.write(toFile: scratch.file("leave.yaml"), atomically: true, encoding: .utf8)
        let left = try await run(["run", "gina-leaves", scratch.file("leave.yaml")])
        #expect(left.status == 0, "\(left.output)")
        let third = try await run(plan)
        #expect(third.status == 2, "\(third.output)")
        #expect(third.stdout.contains("participant Club2/gina"), "\(third.stdout)")
    }

    @Test("an apply that adds one record to a zone of 450 reads back only what changed since its plan")
    func applyReadsBackOnlyTheChanges() async throws {
        let server = try await ServeProcess()
        defer { server.stop() }
        let scratch = try TemporaryDirectory("read-back")
        let run = Self.sharelane(against: server, cacheIn: scratch)
        func recipe(extra: Bool) throws -> String {
            try scratch.write(
                "big.yaml",
                """
                sharelane: 1
                name: big
                users:
                  alice: { email: alice@example.com }
                  bob: { email: bob@example.com }
                owner: alice
                zones:
                  Big:
                    share:
                      participants: { bob: read-only }
                    records:
                      "note-{{i:03}}": { repeat: 450, type: Note, fields: { title: "Note {{i}}" } }
                \(extra ? "      extra: { type: Note, fields: { title: Extra } }" : "")
                """)
        }
        let applied = try await run(["apply", try recipe(extra: false), "--yes"])
        #expect(applied.status == 0, "\(applied.output)")
        let file = try recipe(extra: true)
        let before = server.log.count
        let added = try await run(["apply", file, "--yes"])
        let addLog = server.log.dropFirst(before)
        #expect(added.status == 0, "\(added.output)")
        #expect(added.stdout.contains("1 added, 0 changed, 0 destroyed"), "\(added.stdout)")
        // The plan reads the zone whose declaration changed whole: three pages (450 records and the share, 200
        // a page). The apply reads back only its own change since: one page, where reading the zone back whole
        // took three.
        #expect(Self.zoneFeedRequests(addLog) == 4, "\(addLog)")
        // And what it left in the cache is the store's: the next plan takes the zone from it and is empty.
        let after = server.log.count
        let plan = try await run(["plan", file, "--log-level", "debug", "--detailed-exitcode"])
        #expect(plan.status == 0, "\(plan.output)")
        #expect(Self.fromCache(plan)?.hasSuffix("1 zone from the cache)") == true, "\(plan.stderr)")
        #expect(Self.zoneFeedRequests(server.log.dropFirst(after)) == 0)
    }
}
