import ShareKit

/// What an apply did: the changes it made and the ones that failed, with the store's reason.
///
/// After a partial failure, planning again shows exactly what is left, and applying that converges.
public struct ApplyReport: Sendable, Hashable, Codable {
    /// A change that was made.
    public struct Applied: Sendable, Hashable, Codable {
        public var action: PlannedChange.Action
        public var kind: PlannedChange.Kind
        public var address: String
    }

    /// A change that failed, and why.
    public struct Failure: Sendable, Hashable, Codable, CustomStringConvertible {
        public var action: PlannedChange.Action
        public var kind: PlannedChange.Kind
        public var address: String
        /// What the store said, with its error code (`CONFLICT: …`).
        public var reason: String

        public var description: String { "\(address): \(reason)" }
    }

    public var applied: [Applied]
    public var failures: [Failure]
    /// Why the apply stopped before the end: a request could not be sent or answered (a dead server); the
    /// changes after it were not attempted. Nil when every change was attempted.
    public var stopped: String?

    public init(applied: [Applied] = [], failures: [Failure] = [], stopped: String? = nil) {
        self.applied = applied
        self.failures = failures
        self.stopped = stopped
    }

    /// Changes left untried because the apply stopped.
    public var notAttempted: Int { failures.count { $0.reason == ApplyReport.notAttemptedReason } }

    /// The failures as a person reads them: the first `limit` (changes not attempted left out, as
    /// `line` counts them), then how many more, so that thousands of failures do not flood the terminal.
    public func failureLines(limit: Int = 20) -> [String] {
        let failed = failures.filter { $0.reason != Self.notAttemptedReason }
        var lines = failed.prefix(limit).map(\.description)
        if failed.count > limit { lines.append("… and \(failed.count - limit) more failures") }
        return lines
    }

    /// The reason a change that was never sent carries.
    public static let notAttemptedReason = "not attempted"

    /// How many things were added, changed and destroyed.
    public var summary: PlanSummary {
        PlanSummary(
            add: applied.count { $0.action == .create }, change: applied.count { $0.action == .update },
            destroy: applied.count { $0.action == .delete })
    }

    /// Whether every change was made.
    public var succeeded: Bool { failures.isEmpty }

    /// `Apply complete! Resources: 3 added, 1 changed, 0 destroyed.`, or, after failures, `Apply failed: …
    /// 2 failed.`
    public var line: String {
        let s = summary
        let counts = "\(s.add) added, \(s.change) changed, \(s.destroy) destroyed"
        if stopped != nil {
            let failed = failures.count - notAttempted
            return "Apply stopped: the store could not be reached; \(applied.count) of "
                + "\(failures.count + applied.count) changes were applied before it (resources: \(counts)), "
                + "\(failed) failed, \(notAttempted) were not attempted."
        }
        return succeeded
            ? "Apply complete! Resources: \(counts)."
            : "Apply failed: \(failures.count) of \(failures.count + applied.count) changes failed; resources: \(counts)."
    }
}
