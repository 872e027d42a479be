import Foundation

/// How long a test waits for something before it calls it a hang, in one place.
///
/// A deadline only bounds a hang: it is never what a test checks, and it is set for a machine whose cores are
/// busy with other builds and with the rest of the suite, where a command that takes a second alone can take a
/// minute. Each is multiplied by `SHARELANE_TEST_SLOWDOWN` (a positive number, 1 by default) for a machine
/// slower still. Whether something is fast enough is for `Scripts/bench.sh`, not for a test.
public enum TestDeadlines {
    /// The factor every deadline is multiplied by: `SHARELANE_TEST_SLOWDOWN`, or 1 when it is unset or not a
    /// positive number.
    public static let slowdown: Double = {
        guard let text = ProcessInfo.processInfo.environment["SHARELANE_TEST_SLOWDOWN"],
            let factor = Double(text), factor > 0, factor.isFinite
        else { return 1 }
        return factor
    }()

    /// A command run to its end: one `sharelane` command, a lane, or a script of commands.
    public static var processEnd: Duration { scaled(minutes: 15) }

    /// A server (`serve`, `record`) printing the address it listens on.
    public static var serverStart: Duration { scaled(minutes: 5) }

    /// A process ending after a signal that stops it (Ctrl-C, SIGTERM, SIGKILL), its children with it.
    public static var afterSignal: Duration { scaled(minutes: 3) }

    /// Something a running process is seen to do: a file written, a line printed, a request logged.
    public static var event: Duration { scaled(minutes: 5) }

    /// An HTTP client's connection to a server of the test.
    public static var httpConnect: Duration { scaled(minutes: 2) }

    /// An HTTP request's whole answer, connection included.
    public static var httpRead: Duration { scaled(minutes: 5) }

    /// `limit` as a test's message says it: `900 s`, and how to give a slower machine longer.
    public static func describe(_ limit: Duration) -> String {
        let factor = slowdown.rounded() == slowdown ? String(Int(slowdown)) : String(slowdown)
        return "\(limit.components.seconds) s (SHARELANE_TEST_SLOWDOWN=\(factor) scales every deadline)"
    }

    /// Checks `condition` every 50 ms until it holds or `limit` passes, without holding a thread meanwhile.
    ///
    /// - Returns: whether the condition held.
    public static func poll(within limit: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < deadline, !Task.isCancelled else { return condition() }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    private static func scaled(minutes: Double) -> Duration { .milliseconds(Int64(minutes * 60_000 * slowdown)) }
}
