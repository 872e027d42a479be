import PlanModel
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
    /// What each owner's part wrote in the zones its plan asked about, for the plan's maker to record
    /// (`AfterApply`); empty when the plan asked about none. Never encoded, and never compared.
    package var writes = ApplyWrites()

    enum CodingKeys: String, CodingKey { case applied, failures, stopped }

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
    /// 2 failed.`, or, when the apply could not go on, `Apply stopped: …` with what was and was not applied.
    public var line: String {
        let s = summary
        let counts = "\(s.add) added, \(s.change) changed, \(s.destroy) destroyed"
        if stopped != nil {
            let failed = failures.count - notAttempted
            return "Apply stopped: \(stopCause); \(applied.count) of "
                + "\(failures.count + applied.count) changes were applied before it (resources: \(counts)), "
                + "\(failed) failed, \(notAttempted) were not attempted."
        }
        return succeeded
            ? "Apply complete! Resources: \(counts)."
            : "Apply failed: \(failures.count) of \(failures.count + applied.count) changes failed; resources: \(counts)."
    }

    /// Why the apply stopped, in a few words: the store could not be reached, the connection kept being lost,
    /// or the store kept asking to wait past the retry budget (`RetryPolicy`).
    public var stopCause: String {
        guard let stopped else { return "" }
        if stopped == StopRequest.reason { return "it was asked to stop" }
        if stopped.contains("cannot reach") { return "the store could not be reached" }
        if stopped.contains("lost the connection") { return "the connection to the store was lost too often" }
        if stopped.contains("gave up after") {
            return stopped.contains(ServerErrorCode.throttled.rawValue)
                ? "the store kept throttling past the retry budget"
                : "the store stayed unavailable past the retry budget"
        }
        return "a request to the store failed"
    }

    /// After a stop: the store's own words, then what was applied and what was not, by kind, each with its
    /// first addresses, and what to do. Empty when the apply went to the end.
    /// - Parameter command: the command to run again, `apply` or `destroy`.
    public func stopLines(addresses limit: Int = 5, command: String = "apply") -> [String] {
        guard let stopped else { return [] }
        func listed(_ items: [(PlannedChange.Kind, String)]) -> String {
            var counts: [PlannedChange.Kind: Int] = [:]
            for (kind, _) in items { counts[kind, default: 0] += 1 }
            let byKind = PlannedChange.Kind.allCases.compactMap { kind in
                counts[kind].map { "\($0) \(kind.rawValue)\($0 == 1 ? "" : "s")" }
            }
            let first = items.prefix(limit).map(\.1).joined(separator: ", ")
            return byKind.joined(separator: ", ") + " (" + first + (items.count > limit ? ", …)" : ")")
        }
        var lines = ["Stopped by: \(stopped)"]
        lines.append(
            applied.isEmpty
                ? "Applied before it stopped: nothing"
                : "Applied before it stopped: " + listed(applied.map { ($0.kind, $0.address) }))
        if !failures.isEmpty {
            lines.append("Not applied: " + listed(failures.map { ($0.kind, $0.address) }))
        }
        lines.append("Run the same `sharelane \(command)` again to finish: it plans only what is left.")
        return lines
    }
}
