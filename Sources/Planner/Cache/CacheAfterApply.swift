import Foundation
import PlanModel
import ShareKit

/// What an apply needs to leave a plan's cache file as the store holds it after the apply's writes, so that
/// the next plan reads only what changed since, not every zone the apply wrote (Docs/Plans.md, "Incremental
/// plans"). A plan made with a cache carries it in memory; a saved plan does not, and its apply leaves the
/// file to the next plan.
///
/// The apply takes the zones the file remembers, less those the store's change feed names since the file's
/// token, and adds each zone of `pending` whose changes all succeeded and whose records and shares hold
/// exactly the change tags the plan read and the apply wrote (`Store.zoneTags`): nothing else wrote to it.
struct CacheAfterApply: Sendable {
    /// A zone the plan changes, which a successful apply leaves exactly as declared: its plan after the apply
    /// gives no change, no waiting line (the store acts as every participant, so none waits to accept), and
    /// only the note of the undeclared records it keeps.
    struct Pending: Sendable {
        /// The digest of the zone's declaration (`PlanMemo.contents(of:)`), and without its shares' places.
        var content: String
        var placelessContent: String?
        /// How many live records the recipe does not declare the zone keeps after the apply.
        var undeclared: Int
        /// The notes the zone's plan gives after the apply.
        var notes: [String]
        /// What the plan read of the zone, its tags aside (the plan's basis has them): its token and shares
        /// then. The apply reads the zone back from there (`Store.zoneTags(_:since:in:as:)`); nil for a zone
        /// the store did not have.
        var read: Read?
    }

    /// A zone's token and shares as the plan read them.
    struct Read: Sendable {
        var token: ChangeToken
        var shares: [Share]
    }

    var file: URL
    /// The memo the plan wrote; nil when the owner was not in the store yet (there was nothing to read).
    var memo: PlanMemo?
    /// The recipe, when the plan's recipe was loaded from files.
    var remember: RememberedRecipe?
    /// The plan's context, whose users the apply may sign in (`PlanMemo.Context`).
    var context: PlanMemo.Context
    /// The zones the apply may leave as declared, by name.
    var pending: [String: Pending]
}

// A plan is the same plan whatever its apply leaves in a cache file: `Plan`'s equality leaves it out.
extension CacheAfterApply: Hashable {
    static func == (lhs: CacheAfterApply, rhs: CacheAfterApply) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

// MARK: - AfterApply

extension CacheAfterApply: AfterApply {
    /// The apply reports its writes in the zones it may leave as declared.
    var reportedZones: Set<String> { Set(pending.keys) }
}
