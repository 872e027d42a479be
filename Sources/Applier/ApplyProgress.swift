import Foundation
import PlanModel
import Synchronization
import ShareKit

/// How far an apply has come, reported after each store call, and when a store call waits to send a request
/// again (`waiting`).
public struct ApplyProgress: Sendable, Hashable {
    /// Changes done or failed so far.
    public var completed: Int
    /// Changes in the plan.
    public var total: Int
    /// What was just done (`saved 200 records in FamilyLists`), or what is waited for (`throttled, retrying in
    /// 3 s`).
    public var message: String
    /// Set while a store call waits before it sends a request again: the service asked it to (throttled,
    /// unavailable) or the connection was lost. A long wait is worth saying on the terminal.
    public var waiting: StoreRetry?

    public init(completed: Int, total: Int, message: String, waiting: StoreRetry? = nil) {
        self.completed = completed
        self.total = total
        self.message = message
        self.waiting = waiting
    }
}

/// The count of changes done so far, read by the wait reports of store calls running in child tasks.
final class CompletedChanges: Sendable {
    private let count = Mutex(0)

    var value: Int {
        get { count.withLock { $0 } }
        set { count.withLock { $0 = newValue } }
    }
}

/// Says how far an apply has come, for `sharelane apply` and a lane's `apply` step alike: on a terminal, one
/// status line written over after every store call; elsewhere (a CI log, a lane's output), a plain line every
/// `interval` and, when the apply ends, a last one with the count it reached. An apply shorter than `interval`
/// says nothing, so that short applies keep their output as it was.
public final class ApplyProgressReporter: Sendable {
    public enum Style: Sendable {
        /// One line written over in place (`\r` and erase-line) after each store call when `everyStep`, and
        /// whenever a store call waits: `write` gets the text to write as it is.
        case statusLine(everyStep: Bool)
        /// Plain lines, no escape codes, at most one per `interval` besides the waits and the last line: `write`
        /// gets one line at a time, without its newline.
        case lines(interval: Duration)
    }

    /// How often a plain line is written unless the environment says otherwise.
    public static let defaultInterval = Duration.seconds(5)
    /// The environment variable that sets the interval of plain lines, in seconds (`0` writes a line after
    /// every store call).
    public static let intervalVariable = "SHARELANE_PROGRESS_INTERVAL"

    /// The interval `environment` sets with `SHARELANE_PROGRESS_INTERVAL`, or the default when it sets none
    /// or something that is not a number of seconds.
    public static func interval(environment: [String: String]) -> Duration {
        guard let text = environment[intervalVariable], let seconds = Double(text), seconds >= 0, seconds.isFinite
        else { return defaultInterval }
        return .milliseconds(Int((seconds * 1000).rounded()))
    }

    /// The plain line for `completed` of `total` changes: `1200 of 100003 changes applied`.
    public static func line(completed: Int, total: Int) -> String {
        "\(completed) of \(total) change\(total == 1 ? "" : "s") applied"
    }

    private struct State {
        var lastLine: ContinuousClock.Instant
        var latest: ApplyProgress?
        /// The count of the last plain line written, nil before the first.
        var written: Int?
        var statusShown = false
    }

    private let style: Style
    private let write: @Sendable (String) -> Void
    private let state: Mutex<State>

    /// A reporter that starts counting its interval now.
    public init(style: Style, write: @escaping @Sendable (String) -> Void) {
        self.style = style
        self.write = write
        state = Mutex(State(lastLine: .now))
    }

    /// Takes one report of the applier's (`Applier.apply(_:progress:)`); reports come from several tasks at once.
    public func report(_ progress: ApplyProgress) {
        state.withLock { state in
            state.latest = progress
            switch style {
            case .statusLine(let everyStep):
                guard everyStep || progress.waiting != nil else { return }
                write("\r\u{1B}[K[\(progress.completed)/\(progress.total)] \(progress.message)")
                state.statusShown = true
            case .lines(let interval):
                let now = ContinuousClock.now
                if progress.waiting != nil {
                    write(Self.line(completed: progress.completed, total: progress.total) + "; " + progress.message)
                } else if now - state.lastLine >= interval {
                    write(Self.line(completed: progress.completed, total: progress.total))
                } else {
                    return
                }
                state.lastLine = now
                state.written = progress.completed
            }
        }
    }

    /// Ends the report once the apply has returned: clears the status line, or writes the count reached when
    /// plain lines were written and the last of them said less.
    public func finish() {
        state.withLock { state in
            switch style {
            case .statusLine:
                if state.statusShown { write("\r\u{1B}[K") }
            case .lines:
                guard let written = state.written, let latest = state.latest, latest.completed != written else {
                    return
                }
                write(Self.line(completed: latest.completed, total: latest.total))
                state.written = latest.completed
            }
        }
    }
}
