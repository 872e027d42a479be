import Foundation
import SharelaneTestSupport
import Testing

/// What becomes of a lane's `sh:` step when `sharelane run` is stopped by a signal, through the built binary:
/// SIGHUP (a closed terminal) and SIGTERM reach the step's process group as they came, and nothing of the
/// group outlives `run`, even when it is killed with SIGKILL; the step's programs start with no signal
/// ignored or blocked.
@Suite final class RunSignalTests {
    let scratch: TemporaryDirectory

    init() throws {
        scratch = try TemporaryDirectory("e2e-run-signals")
        _ = try scratch.write(
            "lanes.yaml",
            """
            sharelane: 1
            name: signals
            users:
              alice: { email: alice@example.com }
            owner: alice
            zones:
              Z:
                records:
                  a: { type: Item, fields: { title: A } }
            lanes:
              long:
                steps:
                  - sh: "trap 'echo cleaned > term.marker; exit 3' TERM; sleep 120 & echo $! > long.pid; echo $$ >> long.pid; wait"
                  - sh: "echo the next step ran"
              signals:
                steps:
                  - sh: { run: [grep, -E, "^Sig(Ign|Blk):", /proc/self/status] }

            """)
    }

    /// The step's shell and its background job, once the step wrote both.
    func startedPids() -> [Int32] {
        ((try? String(contentsOfFile: scratch.file("long.pid"), encoding: .utf8)) ?? "").split(separator: "\n")
            .compactMap { Int32($0) }
    }

    /// The process group of a process, from /proc.
    static func group(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After the command's name: state, parent, group.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 2 ? Int32(fields[2]) : nil
    }

    /// The processes still running (zombies aside) in a process group.
    static func running(inGroup group: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard Self.group(of: pid) == group else { return false }
            return !ProcessState.isGone(pid)
        }
    }

    /// Polls until no process of the group runs, for up to `TestDeadlines.afterSignal`.
    static func groupEnds(_ group: Int32) async -> Bool {
        await TestDeadlines.poll(within: TestDeadlines.afterSignal) { running(inGroup: group).isEmpty }
    }

    struct Stopped: Sendable {
        var status: Int32
        var signaled: Bool
        var output: String
        var group: Int32
    }

    /// Runs the `long` lane, sends `signal` to `run` once its step's programs started, and waits for `run`
    /// to end (killing it, and failing, if it is still running `TestDeadlines.afterSignal` later).
    func runLong(stoppedWith signal: Int32) async throws -> Stopped {
        let file = scratch.file("long.pid")
        let process = try StartedProcess(
            ["run", "long", "lanes.yaml", "--store", "memory:"], in: scratch.url,
            log: scratch.url.appendingPathComponent("run.out"))
        defer { process.killBlocking() }
        @Sendable func written() -> [Int32] {
            ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int32($0) }
        }
        let pid = process.processIdentifier
        // The signal as soon as the step wrote both, from a thread of its own: its programs run for two minutes.
        let found = await process.once({ written().count >= 2 }) { () -> Int32? in
            let group = written().last.flatMap(Self.group(of:))
            kill(pid, signal)
            return group
        }
        guard let group = found ?? nil else {
            throw FixtureError(message: "the step never started: \(process.output)")
        }
        let status = try await process.statusAfterSignal("sharelane run was still running (signal \(signal))")
        return Stopped(
            status: status, signaled: process.process.terminationReason == Process.TerminationReason.uncaughtSignal,
            output: process.output,
            group: group)
    }

    @Test func sigHUPReachesTheStepsGroupAndRunExits129() async throws {
        let stopped = try await runLong(stoppedWith: SIGHUP)
        #expect(!stopped.signaled && stopped.status == 129, "\(stopped.status): \(stopped.output)")
        #expect(!stopped.output.contains("the next step ran"), "\(stopped.output)")
        #expect(
            await Self.groupEnds(stopped.group), "left running: \(Self.running(inGroup: stopped.group))")
        #expect(await ProcessState.allGone(startedPids()))
        // SIGHUP, not SIGTERM: the step's TERM trap did not run.
        #expect(!FileManager.default.fileExists(atPath: scratch.file("term.marker")))
    }

    @Test func sigTERMReachesTheStepAsSIGTERM() async throws {
        let stopped = try await runLong(stoppedWith: SIGTERM)
        #expect(!stopped.signaled && stopped.status == 143, "\(stopped.status): \(stopped.output)")
        let marker = (try? String(contentsOfFile: scratch.file("term.marker"), encoding: .utf8)) ?? ""
        #expect(marker == "cleaned\n", "the step's TERM trap did not run: \(stopped.output)")
        #expect(!stopped.output.contains("the next step ran"), "\(stopped.output)")
        #expect(
            await Self.groupEnds(stopped.group), "left running: \(Self.running(inGroup: stopped.group))")
    }

    @Test func killingRunWithSIGKILLLeavesNothingOfTheStepRunning() async throws {
        let stopped = try await runLong(stoppedWith: SIGKILL)
        #expect(stopped.signaled && stopped.status == SIGKILL)
        // Within the step's grace period (5 s); the deadline only bounds a hang.
        #expect(
            await Self.groupEnds(stopped.group), "left running: \(Self.running(inGroup: stopped.group))")
        #expect(await ProcessState.allGone(startedPids()))
    }

    @Test func killingServeWithSIGKILLLeavesNothingOfItsCommandRunning() async throws {
        let directory = scratch.url
        let file = scratch.file("serve.pid")
        let process = try StartedProcess(
            [
                "serve", "--store", "memory:", "--port", "0", "--", "/bin/sh", "-c",
                "echo $$ > serve.pid; sleep 120 & wait",
            ], in: directory, log: directory.appendingPathComponent("serve.out"))
        defer { process.killBlocking() }
        @Sendable func shell() -> Int32? {
            Int32(((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines))
        }
        let pid = process.processIdentifier
        // Killed as soon as its command started, from a thread of its own: the command runs for two minutes.
        let found = await process.once({ shell() != nil }) { () -> Int32? in
            let group = shell().flatMap(Self.group(of:))
            kill(pid, SIGKILL)
            return group
        }
        process.killBlocking()
        guard let group = found ?? nil else {
            throw FixtureError(message: "serve's command never started: \(process.output)")
        }
        #expect(await Self.groupEnds(group), "left running: \(Self.running(inGroup: group))")
    }

    @Test func aStepsProgramStartsWithNoSignalIgnoredOrBlocked() async throws {
        let directory = scratch.url
        let result = try await SharelaneBinary.runProcess(
            SharelaneBinary.executable, ["run", "signals", "lanes.yaml", "--store", "memory:"], in: directory)
        #expect(result.status == 0, "\(result.output)")
        let lines = result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("Sig") }
        // Each mask is 16 hexadecimal digits, after a tab (which the lane's output shows as `\t`).
        #expect(lines.count == 2, "\(result.stdout)")
        for name in ["SigIgn:", "SigBlk:"] {
            let line = lines.first { $0.hasPrefix(name) } ?? ""
            #expect(
                line.hasSuffix("\\t0000000000000000") || line.hasSuffix("\t0000000000000000"),
                "\(name) \(result.stdout)")
        }
    }
}
