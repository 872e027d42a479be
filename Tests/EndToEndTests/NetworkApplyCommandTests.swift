import Foundation
import SharelaneTestSupport
import Testing

/// `sharelane apply` and `plan` over a real network, as processes against a `sharelane serve` process: a bad
/// network is ridden out, an apply that cannot go on stops saying what was and was not applied, and
/// `--parallelism` is a documented, checked option.
@Suite("Apply over a bad network (processes)", .serialized)
struct NetworkApplyCommandTests {
    static var contacts: String { BuiltProducts.packageRoot.appendingPathComponent("Recipes/contacts.yaml").path }

    @Test("--parallelism: in plan's and apply's help with its default, and refused below 1 with what to write")
    func parallelismIsDocumentedAndChecked() async throws {
        for command in ["apply", "plan", "destroy"] {
            let help = try await SharelaneBinary.run([command, "--help"])
            let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(
                text.contains("--parallelism <n> The most store requests under way at once. (default: 10)"),
                "\(command): \(help.output)")
        }
        for value in ["0", "-2"] {
            let refused = try await SharelaneBinary.run(
                ["apply", "--parallelism=\(value)", "--yes", "--store", "memory:", Self.contacts])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("--parallelism must be 1 or more, not \(value)"), "\(refused.output)")
        }
        let one = try await SharelaneBinary.run([
            "apply", "--parallelism", "1", "--yes", "--store", "memory:", Self.contacts,
        ])
        #expect(one.status == 0, "\(one.output)")
    }

    @Test(
        "an apply through a serve that answers 503, resets and loses answers completes; each retry is logged at info, never a token; the next plan is empty"
    )
    func badNetworkIsRiddenOut() async throws {
        let scratch = try TemporaryDirectory("e2e-bad-network")
        let server = try await ServeProcess(extraArguments: [
            // The seed meets a reset and a lost answer, in about a second.
            "--faults", "unavailable=2%,reset=4%,lost-answer=8%", "--fault-seed", "2",
        ])
        defer { server.stop() }
        let cache = ["XDG_CACHE_HOME": scratch.file("cache")]
        let apply = try await server.run(
            ["apply", "--yes", "--parallelism", "1", "--log-level", "info", Self.contacts], environment: cache)
        #expect(apply.status == 0, "\(apply.output)")
        #expect(apply.stdout.contains("Apply complete!"), "\(apply.output)")
        #expect(apply.stderr.contains(", retrying in "), "no retry was logged:\n\(apply.stderr)")
        // The draws are in arrival order: the seed's faults fall on the same places whichever request comes
        // there (the sign-ins of new participants overlap the writes).
        #expect(server.log.contains("fault=lost-answer"), "no answer was lost:\n\(server.log)")
        #expect(server.log.contains("fault=reset"), "no connection was reset:\n\(server.log)")
        #expect(!apply.output.contains(server.apiToken), "the API token was written")
        let plan = try await server.run(["plan", "--detailed-exitcode", Self.contacts], environment: cache)
        #expect(plan.status == 0, "\(plan.output)")
        #expect(plan.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."), "\(plan.output)")
    }

    @Test(
        "a serve that goes away mid-apply: the apply stops within seconds, exit 1, saying what was and was not applied")
    func applyStopsWhenServeGoesAway() async throws {
        let scratch = try TemporaryDirectory("e2e-gone")
        var yaml = "sharelane: 1\nname: gone\nusers: { alice: { email: alice@example.com } }\nzones:\n"
        for zone in 1...40 {
            yaml +=
                "  Z\(zone):\n    records:\n      \"r-{{i}}\": { repeat: 5, type: Note, fields: { n: \"{{i}}\" } }\n"
        }
        let recipe = try scratch.write("gone.yaml", yaml)
        // Each answer waits 200 ms and the zones go one at a time (8 s of writes), so that the apply is still
        // writing when serve stops, however busy the machine.
        let server = try await ServeProcess(extraArguments: ["--latency", "200ms"])
        defer { server.stop() }
        let arguments = [
            "apply", "--yes", "--parallelism", "1", "--timeout", "1s", recipe, "--store", server.url,
        ]
        let environment = ["XDG_CACHE_HOME": scratch.file("cache"), "CLOUDKIT_API_TOKEN": server.apiToken]
        // The watch runs on a thread of its own, checking every 20 ms: waiting in the test's task would need a
        // thread of the shared pool, which on a small machine the other tests may hold until this apply is over.
        let watch = Thread {
            let deadline = Date().addingTimeInterval(TimeInterval(TestDeadlines.event.components.seconds))
            while !server.log.contains("records/modify"), Date() < deadline {
                Thread.sleep(forTimeInterval: 0.02)
            }
            server.stop()
        }
        watch.start()
        let apply = try await SharelaneBinary.run(arguments, environment: environment)
        #expect(apply.status == 1, "\(apply.output)")
        #expect(apply.stdout.contains("Apply stopped: the store could not be reached;"), "\(apply.output)")
        #expect(apply.stderr.contains("Stopped by: "), "\(apply.output)")
        #expect(apply.stderr.contains("Applied before it stopped: 40 zones"), "\(apply.output)")
        #expect(apply.stderr.contains("Not applied: "), "\(apply.output)")
        #expect(apply.stderr.contains("Run the same `sharelane apply` again to finish"), "\(apply.output)")
    }
}
