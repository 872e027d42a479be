/// What a plan's maker keeps with the plan for after its apply: the planner's cache asks the apply to report
/// the change tags it writes in some zones, and records them once the apply returns (`ApplyReport.writes`).
/// The plan does not know what its maker keeps; the applier reads only `reportedZones`.
package protocol AfterApply: Sendable {
    /// The private zones of the owner's part whose writes the apply reports.
    var reportedZones: Set<String> { get }
}

/// A plan's `AfterApply` of each owner's part, by the owner's handle (one entry for a plan of one owner).
package struct AfterApplyByOwner: Sendable {
    package var byOwner: [String: any AfterApply] = [:]

    package init() {}

    package subscript(handle: String) -> (any AfterApply)? {
        get { byOwner[handle] }
        set { byOwner[handle] = newValue }
    }

    /// The entries of both, `other`'s where both have one.
    package func merging(_ other: AfterApplyByOwner) -> AfterApplyByOwner {
        var merged = self
        merged.byOwner.merge(other.byOwner) { _, new in new }
        return merged
    }
}

// A plan is the same plan whatever its maker keeps for after its apply: `Plan`'s equality leaves it out.
extension AfterApplyByOwner: Hashable {
    package static func == (lhs: AfterApplyByOwner, rhs: AfterApplyByOwner) -> Bool { true }
    package func hash(into hasher: inout Hasher) {}
}
