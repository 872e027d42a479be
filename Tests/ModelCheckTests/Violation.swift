/// A broken promise: which invariant, what was found, and at which action of the case.
struct Violation: Error, Hashable, Sendable, CustomStringConvertible {
    /// A short stable key (`apply-then-plan`, `views-differ`, …): shrinking keeps a case that breaks the same one.
    var invariant: String
    var detail: String
    /// Index of the action in the case; -1 before the first.
    var step: Int

    var description: String { "\(invariant) at step \(step + 1): \(detail)" }
}
