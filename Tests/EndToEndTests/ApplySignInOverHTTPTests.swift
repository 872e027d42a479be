import Foundation
import SharelaneTestSupport
import Testing

/// How an apply through `sharelane serve` signs its users in: the new owner with every other new user that
/// fits in the same request, and the owner's token chains for the zones it writes at once in that request too,
/// rather than one sign-in a chain as each write finds the others busy (Docs/CloudKit.md, the sign-in).
@Suite struct ApplySignInOverHTTPTests {
    /// `POST /auth/signin/batch` and `POST /auth/signin` requests in a stretch of serve's log.
    static func signIns(_ log: Substring) -> (batches: Int, single: Int) {
        let lines = log.split(separator: "\n")
        return (lines.count { $0.contains("/auth/signin/batch") }, lines.count { $0.contains("/auth/signin ") })
    }

    static func recipe(zones: ClosedRange<Int>) -> String {
        """
        sharelane: 1
        name: sign-ins
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
          carol: { email: carol@example.com }
        owner: alice
        zones:
        \(zones.map { zone in
            "  Zone\(zone):\n    share:\n      participants:\n        bob: read-write\n        carol: read-only\n"
                + "    records:\n      note: { type: Note, fields: { title: Zone \(zone) } }"
        }.joined(separator: "\n"))

        """
    }

    @Test("an apply signs in a new owner, the owner's token chains and the other users in one request")
    func oneSignInRequest() async throws {
        let server = try await ServeProcess()
        defer { server.stop() }
        let scratch = try TemporaryDirectory("apply-sign-ins")
        let environment = ["CLOUDKIT_API_TOKEN": server.apiToken, "XDG_CACHE_HOME": scratch.file("cache")]
        let run = { (arguments: [String]) in
            try await SharelaneBinary.run(
                arguments + ["--store", server.url, "--parallelism", "4"], environment: environment)
        }

        let four = try scratch.write("four.yaml", Self.recipe(zones: 1...4))
        var before = server.log.count
        let applied = try await run(["apply", four, "--yes"])
        #expect(applied.status == 0, "\(applied.output)")
        // The plan's look-up of who exists, then one sign-in of alice (four times: a chain a zone), bob and carol.
        var signIns = Self.signIns(server.log.dropFirst(before))
        #expect(signIns.batches == 2, "\(server.log.dropFirst(before))")
        #expect(signIns.single == 0, "no write waited for a sign-in of its own: \(server.log.dropFirst(before))")
        #expect(applied.stdout.contains("Apply complete! Resources:"), "\(applied.stdout)")
        let converged = try await run(["plan", four, "--detailed-exitcode"])
        #expect(converged.status == 0, "\(converged.output)")

        // An owner the store has already: the plan's look-up signs alice in, her further chains in the same
        // request.
        let eight = try scratch.write("eight.yaml", Self.recipe(zones: 1...8))
        before = server.log.count
        let grown = try await run(["apply", eight, "--yes"])
        #expect(grown.status == 0, "\(grown.output)")
        signIns = Self.signIns(server.log.dropFirst(before))
        #expect(signIns.batches == 1, "\(server.log.dropFirst(before))")
        #expect(signIns.single == 0, "\(server.log.dropFirst(before))")

        // A saved plan: the apply signs alice in as the plan found her, her further chains in the same request,
        // before it checks the store and writes.
        let twelve = try scratch.write("twelve.yaml", Self.recipe(zones: 1...12))
        let saved = try await run(["plan", twelve, "--out", scratch.file("twelve.plan.json")])
        #expect(saved.status == 0, "\(saved.output)")
        before = server.log.count
        let fromFile = try await run(["apply", scratch.file("twelve.plan.json"), "--yes"])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        signIns = Self.signIns(server.log.dropFirst(before))
        #expect(signIns.batches == 1, "\(server.log.dropFirst(before))")
        #expect(signIns.single == 0, "\(server.log.dropFirst(before))")
        let after = try await run(["plan", twelve, "--detailed-exitcode"])
        #expect(after.status == 0, "\(after.output)")
    }
}
