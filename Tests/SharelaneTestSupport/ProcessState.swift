import Foundation

/// Whether the processes a test saw started are still running: what a test of signals and timeouts asserts.
public enum ProcessState {
    /// Whether a process is gone (a zombie of its own parent counts: it no longer runs).
    public static func isGone(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return true }
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        return status.contains("State:\tZ")
    }

    /// Polls, for up to `TestDeadlines.afterSignal`, until every process is gone (a killed group is reaped by
    /// init).
    public static func allGone(_ pids: [Int32]) async -> Bool {
        await TestDeadlines.poll(within: TestDeadlines.afterSignal) { pids.allSatisfy(isGone) }
    }
}
