import Foundation

/// A broken promise: which invariant, what was found, and at which action of the case.
struct Violation: Error, Hashable, Sendable, CustomStringConvertible {
    /// A short stable key (`apply-then-plan`, `views-differ`, …): shrinking keeps a case that breaks the same one.
    var invariant: String
    var detail: String
    /// Index of the action in the case; -1 before the first.
    var step: Int

    var description: String { "\(invariant) at step \(step + 1): \(detail)" }

    /// The invariant and the shape of the first thing found (names of zones, records and users left out):
    /// `apply-then-plan: + share X/X` and `apply-then-plan: ~ participant X/X/X` are different bugs, and
    /// shrinking must not trade one for the other.
    var signature: String {
        let lines = detail.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        var first = lines.first { $0.hasPrefix("+ ") || $0.hasPrefix("~ ") || $0.hasPrefix("- ") } ?? lines.first ?? ""
        if first.hasSuffix(":"), lines.count > 1 { first = lines[1] }
        let shape = first.replacingOccurrences(
            of: #"\b(Z\d+|r\d+|p\d+|pub\d+|gen-\d+|alice|bob|carol|dana|erin|_[0-9a-f]+)\b"#, with: "X",
            options: .regularExpression
        ).replacingOccurrences(of: #"change tag [^;]*"#, with: "change tag T", options: .regularExpression)
            .replacingOccurrences(of: #"[0-9]+"#, with: "N", options: .regularExpression)
        return "\(invariant): \(shape.prefix(100))"
    }
}
