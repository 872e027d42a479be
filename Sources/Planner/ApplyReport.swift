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

    public init(applied: [Applied] = [], failures: [Failure] = []) {
        self.applied = applied
        self.failures = failures
    }

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
        return succeeded
            ? "Apply complete! Resources: \(counts)."
            : "Apply failed: \(failures.count) of \(failures.count + applied.count) changes failed; resources: \(counts)."
    }
}
