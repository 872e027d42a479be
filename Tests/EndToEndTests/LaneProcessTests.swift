import Foundation
import SharelaneTestSupport
import Testing

/// The programs a lane's `sh:` steps run, as a shell would run them: a background job and `wait` end, a
/// timeout stops everything the step started, and Ctrl-C stops the step's programs and then the lane.
@Suite final class LaneProcessTests {
    let scratch: TemporaryDirectory

    init() throws {
        scratch = try TemporaryDirectory("e2e-lane-process")
        _ = try scratch.write(
            "lanes.yaml",
            """
            sharelane: 1
            name: processes
            users:
              alice: { email: alice@example.com }
            owner: alice
            zones:
              Z:
                records:
                  a: { type: Item, fields: { title: A } }
            lanes:
              background:
                steps:
                  - sh: "sleep 0.2 & wait; echo waited"
              slow:
                steps:
                  - sh: { run: "sleep 120 & echo $! > slow.pid; wait", timeout: 1s }
              long:
                steps:
                  - sh: "sleep 120 & echo $! > long.pid; echo $$ >> long.pid; sleep 121"
                  - sh: "echo the next step ran"

            """)
    }

    func pids(_ name: String) -> [Int32] {
        ((try? String(contentsOfFile: scratch.file(name), encoding: .utf8)) ?? "").split(separator: "\n")
            .compactMap { Int32($0) }
    }

    @Test func aStepThatWaitsForItsBackgroundJobEnds() async throws {
        let directory = scratch.url
        let result = try await SharelaneBinary.runProcess(
            SharelaneBinary.executable, ["run", "background", "lanes.yaml", "--store", "memory:"], in: directory)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("    waited"), "\(result.stdout)")
    }

    @Test func aTimeoutStopsEverythingTheStepStarted() async throws {
        let directory = scratch.url
        let result = try await SharelaneBinary.runProcess(
            SharelaneBinary.executable, ["run", "slow", "lanes.yaml", "--store", "memory:"], in: directory)
        #expect(result.status == 1, "\(result.output)")
        #expect(result.output.contains("ran longer than its timeout of 1 s and was stopped"), "\(result.output)")
        let background = pids("slow.pid")
        #expect(background.count == 1)
        #expect(await ProcessState.allGone(background), "the step's background job is stopped with it")
    }

    @Test func ctrlCStopsTheStepsProgramsAndThenTheLane() async throws {
        let directory = scratch.url
        let file = scratch.file("long.pid")
        let process = try StartedProcess(
            ["run", "long", "lanes.yaml", "--store", "memory:"], in: directory,
            log: directory.appendingPathComponent("run.out"))
        defer { process.killBlocking() }
        @Sendable func written() -> Int {
            ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").count
        }
        let pid = process.processIdentifier
        // Ctrl-C as soon as the step wrote both, from a thread of its own: its programs run for two minutes.
        _ = await process.once({ written() >= 2 }) { kill(pid, SIGINT) }
        let status = try await process.statusAfterSignal("sharelane run was still running")
        let output = process.output
        #expect(status == 130, "\(output)")
        #expect(!output.contains("the next step ran"), "\(output)")
        #expect(output.contains("lane long stopped"), "\(output)")
        let started = pids("long.pid")
        #expect(started.count == 2)
        #expect(await ProcessState.allGone(started), "the step's shell and its background job are stopped")
    }
}
