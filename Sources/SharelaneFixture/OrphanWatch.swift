import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ends a test process whose starter is gone, with its emulators: `swift test` killed with SIGTERM or
/// SIGKILL leaves its test runner to init, which would keep the emulators' ports and memory with nobody
/// to read the results. The process is watched while an emulator runs in it.
actor OrphanWatch {
    static let shared = OrphanWatch()

    private var running: [ObjectIdentifier: SharelaneEmulator] = [:]
    private var watching: Task<Void, Never>?

    /// How often the parent is looked at: a poll, as no portable event tells a process its parent died.
    static let interval: Duration = .milliseconds(500)

    func watch(_ emulator: SharelaneEmulator) {
        running[ObjectIdentifier(emulator)] = emulator
        guard watching == nil else { return }
        let parent = getppid()
        watching = Task.detached(priority: .background) {
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.interval)
                if getppid() != parent {
                    await self.endOrphaned()
                    return
                }
            }
        }
    }

    func forget(_ emulator: SharelaneEmulator) {
        running[ObjectIdentifier(emulator)] = nil
        if running.isEmpty {
            watching?.cancel()
            watching = nil
        }
    }

    private func endOrphaned() async {
        let emulators = Array(running.values)
        running = [:]
        for emulator in emulators { emulator.server.cancel() }
        FileHandle.standardError.write(
            Data(
                "sharelane: the process that started these tests is gone; stopping \(emulators.count) emulator(s) and ending\n"
                    .utf8))
        exit(1)
    }
}
