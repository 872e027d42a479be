import Foundation
import SharelaneTestSupport
import Testing

/// An apply through `sharelane serve` stopped part-way, by SIGKILL or by Ctrl-C, then a plan, a lane or a
/// destroy, then the apply again: the store always converges (README, "Guarantees"; Docs/Plans.md, "Stopping
/// an apply"). The apply is stopped once serve has answered a given number of its requests, so that each
/// test stops it at several points of its run, not at a moment of the clock.
@Suite(.serialized) struct StoppedApplyTests {
    /// Four zones of 250 to 300 records, three shared zone-wide and one from a record, with participants who
    /// accept: an apply over `http:` at 80 ms a request takes about twenty requests, and its acceptances come
    /// last.
    static let recipe = """
        sharelane: 1
        name: stoppable
        users:
          owner: { email: owner@stop.example }
          u1: { email: u1@stop.example }
          u2: { email: u2@stop.example }
          u3: { email: u3@stop.example }
          u4: { email: u4@stop.example }
          u5: { email: u5@stop.example }
        owner: owner
        zones:
          Z1:
            share: { participants: { u1: read-write, u2: read-only, u3: read-write } }
            records:
              "item-{{i}}": { repeat: 300, type: Item, fields: { title: "Item {{i}}", qty: 3 } }
          Z2:
            share: { participants: { u2: read-write, u4: read-only } }
            records:
              "item-{{i}}": { repeat: 300, type: Item, fields: { title: "Item {{i}}", qty: 3 } }
          Z3:
            records:
              trip:
                type: Trip
                fields: { title: Away }
                share: { participants: { u5: read-write, u1: read-only } }
                children:
                  "day-{{i}}": { repeat: 250, type: Day, fields: { title: "Day {{i}}" } }
          Z4:
            share: { participants: { u3: read-write, u4: read-write, u5: read-only } }
            records:
              "item-{{i}}": { repeat: 300, type: Item, fields: { title: "Item {{i}}", qty: 3 } }
        lanes:
          fill:
            steps:
              - apply
              - expect: { as: u5, zone: Z3, record: trip, can: write }
              - expect: { as: u2, zone: Z1, can: read }
        """

    /// The Web Services requests serve has answered (its log has a line for each).
    static func requests(_ server: ServeProcess) -> Int {
        server.log.split(separator: "\n").count { $0.contains("[Emulator] POST") || $0.contains("[Emulator] GET") }
    }

    /// A `sharelane` process under way, stopped by a test.
    final class Running: @unchecked Sendable {
        let process = Process()
        let exit: ProcessExit
        let scratch: TemporaryDirectory

        init(_ arguments: [String], environment: [String: String]) throws {
            scratch = try TemporaryDirectory("running")
            exit = ProcessExit(process)
            var all = ProcessInfo.processInfo.environment
            all.removeValue(forKey: "SHARELANE_STORE")
            all.merge(environment) { $1 }
            process.executableURL = SharelaneBinary.executable
            process.arguments = arguments
            process.environment = all
            process.currentDirectoryURL = BuiltProducts.packageRoot
            for name in ["stdout", "stderr"] {
                _ = FileManager.default.createFile(atPath: scratch.file(name), contents: nil)
            }
            process.standardOutput = try FileHandle(forWritingTo: scratch.url.appendingPathComponent("stdout"))
            process.standardError = try FileHandle(forWritingTo: scratch.url.appendingPathComponent("stderr"))
            process.standardInput = FileHandle.nullDevice
            try process.run()
        }

        var stderr: String { (try? String(contentsOfFile: scratch.file("stderr"), encoding: .utf8)) ?? "" }
        var stdout: String { (try? String(contentsOfFile: scratch.file("stdout"), encoding: .utf8)) ?? "" }

        /// Waits until `condition` holds or the process ends; whether it held. Checked every 5 ms: the signal
        /// that follows must reach the command while it is still at the point the condition names.
        @discardableResult
        func wait(until condition: () -> Bool) -> Bool {
            exit.waitWhileRunningBlocking(within: TestDeadlines.event, every: .milliseconds(5), until: condition)
        }

        func signal(_ number: Int32) { kill(process.processIdentifier, number) }

        /// The exit status, 128 + the signal's number when a signal ended it.
        func finish() -> Int32 {
            if exit.statusBlocking(within: TestDeadlines.afterSignal) == nil {
                kill(process.processIdentifier, SIGKILL)
                _ = exit.statusBlocking(within: TestDeadlines.afterSignal)
                Issue.record("the command was still running \(TestDeadlines.describe(TestDeadlines.afterSignal))")
            }
            return process.terminationReason == .uncaughtSignal
                ? 128 + process.terminationStatus : process.terminationStatus
        }
    }

    /// A serve at 80 ms a request, a recipe file and a plan cache of their own, and the commands run on them.
    struct Setup {
        let server: ServeProcess
        let scratch: TemporaryDirectory
        let recipeFile: String
        var environment: [String: String] {
            ["CLOUDKIT_API_TOKEN": server.apiToken, "XDG_CACHE_HOME": scratch.file("cache")]
        }

        init(latency: String = "80ms") async throws {
            server = try await ServeProcess(extraArguments: ["--latency", latency])
            scratch = try TemporaryDirectory("stopped-apply")
            recipeFile = try scratch.write("stoppable.yaml", StoppedApplyTests.recipe)
        }

        func run(_ arguments: [String]) async throws -> SharelaneBinary.Result {
            try await SharelaneBinary.run(arguments + ["--store", server.url], environment: environment)
        }

        func start(_ arguments: [String]) throws -> Running {
            try Running(arguments + ["--store", server.url], environment: environment)
        }

        /// Starts `arguments`, stops it with `signalNumber` once serve has answered `after` more requests, and
        /// returns what it printed and its status.
        func stop(_ arguments: [String], after: Int, with signalNumber: Int32) throws -> (Running, Int32) {
            let before = StoppedApplyTests.requests(server)
            let running = try start(arguments)
            running.wait { StoppedApplyTests.requests(server) - before >= after }
            running.signal(signalNumber)
            return (running, running.finish())
        }

        /// The plan's last line, and whether it plans no change.
        func planIsEmpty(_ extra: [String] = []) async throws -> (Bool, String) {
            let plan = try await run(["plan", recipeFile, "--detailed-exitcode"] + extra)
            return (plan.status == 0, plan.output)
        }
    }

    @Test(
        "SIGKILL part-way through an apply, then a plan, then the apply again: it converges at every stopping point",
        // The apply is 21 requests: sign-ins, the schema and the zones, 8 record batches, 5 acceptances, then the
        // read-back (the database's changes, then its zones' at once). Each point leaves at least two requests
        // one after another, 160 ms, for the signal to land in: after the 20th only the last of the zones' reads
        // is left, which an optimised build answers within milliseconds of the others.
        arguments: [2, 6, 11, 14, 17])
    func killedApplyThenPlanConverges(after requests: Int) async throws {
        let setup = try await Setup()
        defer { setup.server.stop() }
        let (_, status) = try setup.stop(["apply", setup.recipeFile, "--yes"], after: requests, with: SIGKILL)
        #expect(status == 128 + SIGKILL)
        // The plan between the stopped apply and the next (a plan from the cache file knows the users the
        // stopped apply signed in, and signs in the owner alone).
        let between = try await setup.run(["plan", setup.recipeFile])
        #expect(between.status == 0, "\(between.output)")
        let again = try await setup.run(["apply", setup.recipeFile, "--yes"])
        #expect(again.status == 0, "stopped after \(requests) requests: \(again.output)")
        #expect(again.stdout.contains("Apply complete!") || again.stdout.contains("Plan: 0 to add"), "\(again.output)")
        let (empty, plan) = try await setup.planIsEmpty()
        #expect(empty, "after \(requests) requests: \(plan)")
        // And the apply after that changes nothing.
        let third = try await setup.run(["apply", setup.recipeFile, "--yes"])
        #expect(third.stdout.contains("Plan: 0 to add, 0 to change, 0 to destroy."), "\(third.output)")
    }

    @Test(
        "Ctrl-C during an apply: it says it is stopping, lets the requests in flight finish, starts no new one, reports, exits 130; the next apply converges"
    )
    func interruptedApplyStopsCleanly() async throws {
        let setup = try await Setup()
        defer { setup.server.stop() }
        let before = Self.requests(setup.server)
        let running = try setup.start(["apply", setup.recipeFile, "--yes"])
        running.wait { Self.requests(setup.server) - before >= 8 }
        running.signal(SIGINT)
        // The stopping line says how many requests are under way; serve answers no more than those after it.
        #expect(running.wait { running.stderr.contains("Stopping: ") })
        let atSignal = Self.requests(setup.server)
        let status = running.finish()
        let stderr = running.stderr
        #expect(status == 130, "\(stderr)")
        let line = stderr.split(separator: "\n").first { $0.hasPrefix("Stopping: ") }.map(String.init) ?? ""
        #expect(line.hasSuffix("; nothing new starts (Ctrl-C again to stop at once)"), "\(stderr)")
        let inFlight = line.firstMatch(of: /the (\d+) requests? in flight/).flatMap { Int($0.1) } ?? 0
        #expect(Self.requests(setup.server) - atSignal <= inFlight, "\(line)\n\(setup.server.log)")
        // The report: what was applied, what was not attempted.
        #expect(running.stdout.contains("Apply stopped: it was asked to stop;"), "\(running.stdout)")
        #expect(running.stdout.contains("were not attempted."), "\(running.stdout)")
        #expect(!running.stdout.contains("Apply complete!"), "\(running.stdout)")
        #expect(stderr.contains("Applied before it stopped:"), "\(stderr)")
        #expect(stderr.contains("Run the same `sharelane apply` again"), "\(stderr)")

        let again = try await setup.run(["apply", setup.recipeFile, "--yes"])
        #expect(again.status == 0, "\(again.output)")
        let (empty, plan) = try await setup.planIsEmpty()
        #expect(empty, "\(plan)")
    }

    @Test("a second Ctrl-C ends the apply at once, saying the store may be partly changed; the next apply converges")
    func secondInterruptStopsAtOnce() async throws {
        // Half a second a request: the second Ctrl-C comes while the first waits for the request in flight.
        let setup = try await Setup(latency: "500ms")
        defer { setup.server.stop() }
        let before = Self.requests(setup.server)
        let running = try setup.start(["apply", setup.recipeFile, "--yes"])
        // Past the plan's reads: the apply writes.
        running.wait { Self.requests(setup.server) - before >= 8 }
        running.signal(SIGINT)
        // The second Ctrl-C once the first is taken, so that the two are not read as one.
        running.wait { running.stderr.contains("Stopping: ") }
        running.signal(SIGINT)
        let status = running.finish()
        #expect(status == 130, "\(running.stderr)")
        #expect(running.stderr.contains("Stopping: "), "\(running.stderr)")
        #expect(
            running.stderr.contains("Stopped at once: \(setup.server.url) may be partly changed."), "\(running.stderr)")
        // It did not wait for a request in flight (half a second each) to write its report.
        if running.stderr.contains("requests in flight finish") || running.stderr.contains("request in flight finish") {
            #expect(!running.stdout.contains("Apply stopped:"), "\(running.stdout)")
        }
        #expect(!running.stdout.contains("Apply complete!"), "\(running.stdout)")
        let again = try await setup.run(["apply", setup.recipeFile, "--yes"])
        #expect(again.status == 0, "\(again.output)")
        #expect(try await setup.planIsEmpty().0)
    }

    @Test("Ctrl-C during a plan ends it at once with status 130, writing nothing")
    func interruptedPlanStopsAtOnce() async throws {
        let setup = try await Setup()
        defer { setup.server.stop() }
        let before = Self.requests(setup.server)
        let running = try setup.start(["plan", setup.recipeFile])
        running.wait { Self.requests(setup.server) - before >= 1 }
        running.signal(SIGINT)
        #expect(running.finish() == 130, "\(running.stderr)")
        #expect(!running.stderr.contains("Stopping:"), "\(running.stderr)")
        let (_, plan) = try await setup.planIsEmpty()
        #expect(plan.contains("Plan: 1169 to add, 0 to change, 0 to destroy."), "\(plan)")
    }

    @Test(
        "a lane whose apply is stopped by SIGKILL or Ctrl-C, then a plan, then the lane again: it converges and its checks pass",
        arguments: [(SIGKILL, 5), (SIGINT, 9), (SIGKILL, 17)])
    func stoppedLaneConverges(signalNumber: Int32, after requests: Int) async throws {
        let setup = try await Setup()
        defer { setup.server.stop() }
        let (running, status) = try setup.stop(["run", "fill", setup.recipeFile], after: requests, with: signalNumber)
        #expect(status == 128 + signalNumber, "\(running.stdout)\(running.stderr)")
        if signalNumber == SIGINT {
            #expect(running.stdout.contains("✘ lane fill stopped"), "\(running.stdout)")
            // The checks after the apply did not run.
            #expect(!running.stdout.contains("expect"), "\(running.stdout)")
        }
        let between = try await setup.run(["plan", setup.recipeFile])
        #expect(between.status == 0, "\(between.output)")
        let lane = try await setup.run(["run", "fill", setup.recipeFile])
        #expect(lane.status == 0, "\(lane.output)")
        #expect(lane.stdout.contains("✔ lane fill succeeded"), "\(lane.output)")
        let (empty, plan) = try await setup.planIsEmpty()
        #expect(empty, "\(plan)")
    }

    @Test(
        "a destroy stopped by SIGKILL or Ctrl-C, then a plan, then the destroy again: nothing the recipe declares is left",
        arguments: [(SIGKILL, 2), (SIGINT, 5), (SIGKILL, 7)])
    func stoppedDestroyConverges(signalNumber: Int32, after requests: Int) async throws {
        // A destroy of this recipe is 9 requests: 4 reads one after another, 4 zones' changes at once, then the
        // one write. Past the 5th answer only the write is left, so the signal has one request's latency to
        // land in; 300 ms a request leaves it that long on a busy machine, where 80 ms did not.
        let setup = try await Setup(latency: "300ms")
        defer { setup.server.stop() }
        let applied = try await setup.run(["apply", setup.recipeFile, "--yes"])
        #expect(applied.status == 0, "\(applied.output)")
        let (running, status) = try setup.stop(
            ["destroy", setup.recipeFile, "--yes"], after: requests, with: signalNumber)
        #expect(status == 128 + signalNumber, "\(running.stdout)\(running.stderr)")
        let between = try await setup.run(["plan", setup.recipeFile])
        #expect(between.status == 0, "\(between.output)")
        let again = try await setup.run(["destroy", setup.recipeFile, "--yes"])
        #expect(again.status == 0, "\(again.output)")
        let last = try await setup.run(["destroy", setup.recipeFile, "--yes"])
        #expect(last.stdout.contains("Nothing to destroy"), "\(last.output)")
        // And it can be applied again from nothing.
        let reapplied = try await setup.run(["apply", setup.recipeFile, "--yes"])
        #expect(reapplied.status == 0, "\(reapplied.output)")
        #expect(try await setup.planIsEmpty().0)
    }
}
