import Foundation
import SharelaneTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Several `sharelane` processes on one local store at once: the store lock, and a new store file opened by
/// several processes together. Real processes, a real SQLite file; nothing is timed: each step waits for
/// what a process says or writes.
@Suite("Concurrent sharelane processes", .serialized)
final class ConcurrentCommandTests {
    let scratch: TemporaryDirectory
    var directory: URL { scratch.url }
    let storePath: String
    var store: String { "sqlite:" + storePath }
    let recipe: String

    init() throws {
        scratch = try TemporaryDirectory("e2e")
        storePath = scratch.file("store.sqlite")
        recipe = scratch.file("lists.yaml")
        try """
        sharelane: 1
        name: lists
        users:
          alice: { email: alice@example.com }
        zones:
          Lists:
            records:
              groceries: { type: TodoList, fields: { title: Groceries } }
        lanes:
          add:
            steps:
              - save: { zone: Lists, record: eggs, type: Todo, parent: groceries, fields: { title: Eggs } }
          check:
            steps:
              - expect: { zone: Lists, records: 0 }
        """.write(toFile: recipe, atomically: true, encoding: .utf8)
    }

    /// A started process with its output in pipes.
    final class Running {
        let process = Process()
        let exit: ProcessExit
        let stdout = Pipe()
        let stderr = Pipe()

        init(_ arguments: [String], in directory: URL, stdin: FileHandle = .nullDevice) throws {
            exit = ProcessExit(process)
            process.executableURL = SharelaneBinary.executable
            process.arguments = arguments
            process.currentDirectoryURL = directory
            var environment = ProcessInfo.processInfo.environment
            environment.removeValue(forKey: "SHARELANE_STORE")
            environment["NO_COLOR"] = "1"
            process.environment = environment
            process.standardInput = stdin
            process.standardOutput = stdout
            process.standardError = stderr
            try process.run()
        }

        /// Reads standard error until it holds `text` (or the process closes it); returns what was read.
        func waitForError(containing text: String) -> String {
            var seen = Data()
            while !String(decoding: seen, as: UTF8.self).contains(text) {
                let chunk = stderr.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                seen.append(chunk)
            }
            return String(decoding: seen, as: UTF8.self)
        }

        /// Waits for the exit; the status and everything printed.
        func finish(stderrSoFar: String = "") -> SharelaneBinary.Result {
            let out = stdout.fileHandleForReading.readDataToEndOfFile()
            let err = stderr.fileHandleForReading.readDataToEndOfFile()
            _ = exit.statusBlocking(within: TestDeadlines.processEnd)
            return SharelaneBinary.Result(
                status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                stderr: stderrSoFar + String(decoding: err, as: UTF8.self))
        }
    }

    /// A pseudo-terminal: `apply` without `--yes` asks on it, and holds the store lock while it waits.
    final class PseudoTerminal {
        let primary: Int32
        let secondary: FileHandle

        init() throws {
            // posix_openpt and its companions are not in Swift's Glibc module (they need _XOPEN_SOURCE): look
            // them up in the C library.
            typealias OpenPT = @convention(c) (Int32) -> Int32
            typealias Name = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
            func function<T>(_ name: String, as type: T.Type) throws -> T {
                guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
                    throw FixtureError(message: "no \(name) in the C library")
                }
                return unsafeBitCast(symbol, to: type)
            }
            let openpt = try function("posix_openpt", as: OpenPT.self)
            let grantpt = try function("grantpt", as: OpenPT.self)
            let unlockpt = try function("unlockpt", as: OpenPT.self)
            let ptsname = try function("ptsname", as: Name.self)
            primary = openpt(O_RDWR | O_NOCTTY)
            guard primary >= 0, grantpt(primary) == 0, unlockpt(primary) == 0, let name = ptsname(primary) else {
                throw FixtureError(message: "cannot open a pseudo-terminal")
            }
            let descriptor = open(String(cString: name), O_RDWR | O_NOCTTY)
            guard descriptor >= 0 else { throw FixtureError(message: "cannot open the pseudo-terminal's end") }
            secondary = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        }

        /// Types a line, as a person answering the question.
        func type(_ line: String) {
            let bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(primary, $0.baseAddress, $0.count) }
        }

        deinit { close(primary) }
    }

    /// Starts `sharelane apply` on a terminal, and returns once it holds the lock and asks for `yes`.
    func applyHoldingTheLock(_ terminal: PseudoTerminal) throws -> (Running, pid: Int32) {
        let first = try Running(["apply", recipe, "--store", store], in: directory, stdin: terminal.secondary)
        let lockFile = storePath + ".lock"
        // The lock file names its holder once the lock is taken; the question comes after the plan.
        func holder() -> Int32? {
            guard let data = FileManager.default.contents(atPath: lockFile),
                let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return nil }
            return (json["pid"] as? NSNumber)?.int32Value
        }
        let held = first.exit.waitWhileRunningBlocking(within: TestDeadlines.event, every: .milliseconds(10)) {
            holder() == first.process.processIdentifier
        }
        guard held, !first.exit.hasEnded else {
            throw FixtureError(message: "the first apply exited or never took the lock: \(first.finish().output)")
        }
        return (first, first.process.processIdentifier)
    }

    @Test(
        "a second apply on a locked store exits 1 at once with --lock-timeout 0s, naming the holder's pid and start time"
    )
    func secondApplyIsToldWhoHoldsTheLock() async throws {
        let terminal = try PseudoTerminal()
        let (first, pid) = try applyHoldingTheLock(terminal)
        let second = try await SharelaneBinary.run(
            ["apply", recipe, "--store", store, "--yes", "--lock-timeout", "0s"], in: directory,
            environment: ["NO_COLOR": "1"])
        terminal.type("no")
        _ = first.finish()

        #expect(second.status == 1, "\(second.output)")
        #expect(
            second.stderr.contains(
                "Error: cannot take the store lock: \(store) is locked by sharelane process \(pid) (apply, since "),
            "\(second.stderr)")
        #expect(
            second.stderr.contains(
                "Lock Info:\n  Path:      \(storePath).lock\n  PID:       \(pid)\n  Operation: apply\n  Created:   "))
        #expect(second.stderr.contains("--lock-timeout"))
        // It changed nothing: the store still has no records.
        #expect(!second.stdout.contains("Apply complete"))
        let plan = try await SharelaneBinary.run(
            ["plan", recipe, "--store", store], in: directory, environment: ["NO_COLOR": "1"])
        #expect(plan.stdout.contains("Plan: 2 to add, 0 to change, 0 to destroy."), "\(plan.output)")
    }

    @Test("a second apply waits for the lock, then plans against what the first applied: nothing left to do")
    func secondApplyWaitsForTheFirst() throws {
        let terminal = try PseudoTerminal()
        let (first, pid) = try applyHoldingTheLock(terminal)
        let second = try Running(["apply", recipe, "--store", store, "--yes", "--lock-timeout", "10m"], in: directory)
        let waiting = second.waitForError(containing: "for the store lock")
        #expect(
            waiting.contains("Waiting up to 10m for the store lock on \(store), held by process \(pid) (apply, since "))
        terminal.type("yes")
        let firstResult = first.finish()
        #expect(firstResult.status == 0, "\(firstResult.output)")
        #expect(firstResult.stdout.contains("Apply complete! Resources: 2 added, 0 changed, 0 destroyed."))
        let secondResult = second.finish(stderrSoFar: waiting)
        #expect(secondResult.status == 0, "\(secondResult.output)")
        #expect(secondResult.stdout.contains("No changes"), "\(secondResult.output)")
    }

    @Test("a lane that writes takes the lock too; a lane that only reads does not")
    func lanesThatWriteTakeTheLock() async throws {
        let terminal = try PseudoTerminal()
        let (first, pid) = try applyHoldingTheLock(terminal)
        let writing = try await SharelaneBinary.run(
            ["run", "add", recipe, "--store", store, "--lock-timeout", "0s"], in: directory)
        let reading = try await SharelaneBinary.run(
            ["run", "check", recipe, "--store", store, "--lock-timeout", "0s"], in: directory)
        terminal.type("no")
        _ = first.finish()
        #expect(writing.status == 1, "\(writing.output)")
        #expect(writing.stderr.contains("PID:       \(pid)"), "\(writing.output)")
        #expect(reading.status == 0, "\(reading.output)")
    }

    @Test("six processes opening one new store file at once all succeed")
    func sixProcessesOpenOneNewFile() throws {
        for round in 0..<5 {
            let path = directory.appendingPathComponent("new-\(round)/store.sqlite").path
            let processes = try (0..<6).map { _ in
                try Running(["show", "--store", "sqlite:" + path], in: directory)
            }
            for process in processes {
                let result = process.finish()
                #expect(result.status == 0, "round \(round): \(result.output)")
                #expect(result.stdout.contains("is empty"), "round \(round): \(result.output)")
            }
        }
    }
}
