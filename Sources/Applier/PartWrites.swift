import PlanModel
import ShareKit

/// What one owner's part of an apply wrote in the zones its plan asked about (`AfterApply.reportedZones`),
/// for the plan's maker to record once the apply returns: the planner's cache file, read back from the store
/// from what the plan read and what the apply wrote.
package struct PartWrites: Sendable {
    /// The part's owner: the handle `Plan.afterApply` names them by, and their record name after the apply's
    /// sign-ins.
    package var ownerHandle: String
    package var owner: UserRecordName
    /// The zones the part's plan read, with their tags then (its basis).
    package var basis: [ZoneBasis]
    /// The zones asked about, and the tags the apply wrote in them.
    package var zones: Set<String>
    package var tags: WrittenTags
    /// The private zones with a change the apply did not make.
    package var unfinished: Set<String>
    /// Record names of the users the apply signed in, by normalized email address.
    package var signedIn: [String: UserRecordName]
}

/// The `PartWrites` of an apply, in `ApplyReport.writes`: parts of an apply that went to the end, asked about
/// at least one zone.
package struct ApplyWrites: Sendable {
    package var parts: [PartWrites] = []

    package init() {}
}

// What an apply wrote for its plan's maker is not what it did: `ApplyReport`'s equality leaves it out.
extension ApplyWrites: Hashable {
    package static func == (lhs: ApplyWrites, rhs: ApplyWrites) -> Bool { true }
    package func hash(into hasher: inout Hasher) {}
}
