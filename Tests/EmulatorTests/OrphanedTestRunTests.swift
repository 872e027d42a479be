import Foundation
import SharelaneTestSupport
import SharelaneTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking  // URLSession on Linux
#endif

#if os(Linux)
    /// A test process using `SharelaneTesting` whose starter is killed outright (`swift test` killed with
    /// SIGKILL or SIGTERM, which never reach its test runner) ends with its emulators, rather than running on
    /// under init with their ports and memory.
    @Suite struct OrphanedTestRunTests {
        static let probeVariable = "SHARELANE_ORPHAN_PROBE"

        /// The test process of the test below, and nothing otherwise: starts an emulator, says so, and waits
        /// for the end the emulator's watch brings when its starter is gone.
        @Test func probe() async throws {
            guard let file = ProcessInfo.processInfo.environment[Self.probeVariable] else { return }
            let emulator = try await SharelaneEmulator.startEmpty()
            try "\(getpid()) \(emulator.baseURL)".write(toFile: file, atomically: true, encoding: .utf8)
            // Bounded: the test below fails long before this ends.
            try await Task.sleep(for: .seconds(120))
        }

        @Test func aTestRunWhoseStarterIsKilledEndsWithItsEmulators() async throws {
            let scratch = try TemporaryDirectory("orphaned-run")
            let said = scratch.file("probe")
            let bundle = try #require(Bundle.main.executablePath)
            // The starter, as `swift test` is: it runs this test bundle and is then killed with SIGKILL.
            let starter = Process()
            starter.executableURL = URL(fileURLWithPath: "/bin/sh")
            starter.arguments = [
                "-c", #""$0" --testing-library swift-testing --filter 'OrphanedTestRunTests/probe' & wait"#, bundle,
            ]
            starter.environment = ProcessInfo.processInfo.environment.merging([Self.probeVariable: said]) { $1 }
            starter.standardOutput = FileHandle.nullDevice
            starter.standardError = FileHandle.nullDevice
            try starter.run()
            func text() -> String { (try? String(contentsOfFile: said, encoding: .utf8)) ?? "" }
            _ = await TestDeadlines.poll(within: TestDeadlines.serverStart) { !text().isEmpty }
            // Not waited for here: Foundation's wait also waits for what the starter left running.
            kill(starter.processIdentifier, SIGKILL)
            let parts = text().split(separator: " ")
            guard parts.count == 2, let runner = Int32(parts[0]) else {
                throw FixtureError(message: "the test process did not start its emulator: '\(text())'")
            }
            let baseURL = String(parts[1])
            let gone = await TestDeadlines.poll(within: TestDeadlines.afterSignal) { ProcessState.isGone(runner) }
            #expect(gone, "the orphaned test process \(runner) is still running")
            if !gone { kill(runner, SIGKILL) }
            // Nothing listens where its emulator did.
            let url = try #require(URL(string: "\(baseURL)/"))
            await #expect(throws: (any Error).self) { _ = try await URLSession.shared.data(from: url) }
        }
    }
#endif
