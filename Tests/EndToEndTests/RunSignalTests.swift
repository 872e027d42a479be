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

    /// Polls until no process of the group runs, for up to `seconds`.
    static func groupEnds(_ group: Int32, within seconds: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if running(inGroup: group).isEmpty { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return running(inGroup: group).isEmpty
    }

    struct Stopped: Sendable {
        var status: Int32
        var signaled: Bool
        var output: String
        var group: Int32
    }

    /// Runs the `long` lane, sends `signal` to `run` once its step's programs started, and waits for `run`
    /// to end (killing it, and failing, if it is still running 30 s later).
    func runLong(stoppedWith signal: Int32) async throws -> Stopped {
        let directory = scratch.url
        let file = scratch.file("long.pid")
        return try await SharelaneBinary.offPool { () throws -> Stopped in
            let log = directory.appendingPathComponent("run.out")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let handle = try FileHandle(forWritingTo: log)
            let process = Process()
            process.executableURL = SharelaneBinary.executable
            process.arguments = ["run", "long", "lanes.yaml", "--store", "memory:"]
            process.currentDirectoryURL = directory
            process.standardOutput = handle
            process.standardError = handle
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(60)
            func written() -> [Int32] {
                ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n")
                    .compactMap { Int32($0) }
            }
            while written().count < 2, process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            guard let shell = written().last, let group = Self.group(of: shell) else {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw FixtureError(
                    message: "the step never started: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
            }
            kill(process.processIdentifier, signal)
            let stopBy = Date().addingTimeInterval(30)
            while process.isRunning, Date() < stopBy { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw FixtureError(message: "sharelane run was still running 30 s after signal \(signal)")
            }
            process.waitUntilExit()
            return Stopped(
                status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
                output: (try? String(contentsOf: log, encoding: .utf8)) ?? "", group: group)
        }
    }

    @Test func sigHUPReachesTheStepsGroupAndRunExits129() async throws {
        let stopped = try await runLong(stoppedWith: SIGHUP)
        #expect(!stopped.signaled && stopped.status == 129, "\(stopped.status): \(stopped.output)")
        #expect(!stopped.output.contains("the next step ran"), "\(stopped.output)")
        #expect(
            await Self.groupEnds(stopped.group, within: 10), "left running: \(Self.running(inGroup: stopped.group))")
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
            await Self.groupEnds(stopped.group, within: 10), "left running: \(Self.running(inGroup: stopped.group))")
    }

    @Test func killingRunWithSIGKILLLeavesNothingOfTheStepRunning() async throws {
        let stopped = try await runLong(stoppedWith: SIGKILL)
        #expect(stopped.signaled && stopped.status == SIGKILL)
        // Bounded: the step's grace period (5 s) and a margin.
        #expect(
            await Self.groupEnds(stopped.group, within: 15), "left running: \(Self.running(inGroup: stopped.group))")
        #expect(await ProcessState.allGone(startedPids()))
    }

    @Test func killingServeWithSIGKILLLeavesNothingOfItsCommandRunning() async throws {
        let directory = scratch.url
        let file = scratch.file("serve.pid")
        let group = try await SharelaneBinary.offPool { () throws -> Int32 in
            let process = Process()
            process.executableURL = SharelaneBinary.executable
            process.arguments = [
                "serve", "--store", "memory:", "--port", "0", "--", "/bin/sh", "-c",
                "echo $$ > serve.pid; sleep 120 & wait",
            ]
            process.currentDirectoryURL = directory
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(60)
            func shell() -> Int32? {
                Int32(((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines))
            }
            while shell() == nil, process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            let group = shell().flatMap(Self.group(of:))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            guard let group else { throw FixtureError(message: "serve's command never started") }
            return group
        }
        #expect(await Self.groupEnds(group, within: 15), "left running: \(Self.running(inGroup: group))")
    }

    @Test func aStepsProgramStartsWithNoSignalIgnoredOrBlocked() async throws {
        let directory = scratch.url
        let result = try await SharelaneBinary.offPool {
            try SharelaneBinary.runProcess(
                SharelaneBinary.executable, ["run", "signals", "lanes.yaml", "--store", "memory:"], in: directory,
                timeout: 60)
        }
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
