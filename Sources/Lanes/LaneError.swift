import Foundation
import Recipe
import ShareKit

/// Why a lane could not run, or why one of its steps failed.
public enum LaneError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The recipe has no lane of that name.
    case unknownLane(name: String, available: [String], file: String)
    /// A `private: true` lane was asked for from the command line.
    case privateLane(name: String, location: SourceLocation)
    /// A lane calls itself, directly or through other lanes.
    case laneCycle(chain: [String], location: SourceLocation)
    /// `as:` or `owner` names a handle the recipe does not declare.
    case unknownUser(handle: String, location: SourceLocation)
    /// An `expect` step found something other than what it expected.
    case expectationFailed(expected: String, found: String, location: SourceLocation)
    /// A step that the store refused or could not do.
    case stepFailed(action: String, reason: String, location: SourceLocation)
    /// `reset` on a store that cannot be wiped.
    case resetRefused(store: String, location: SourceLocation)
    /// A step needs a share that the live store does not hold.
    case shareNotFound(what: String, hint: String, location: SourceLocation)
    /// The run was asked to stop (Ctrl-C, SIGTERM) before this step, which was not run, nor any after it.
    case interrupted(location: SourceLocation)

    /// Where in the recipe the problem was written, when it was.
    public var location: SourceLocation? {
        switch self {
        case .unknownLane: nil
        case .privateLane(_, let l), .laneCycle(_, let l), .unknownUser(_, let l),
            .expectationFailed(_, _, let l), .stepFailed(_, _, let l), .resetRefused(_, let l),
            .shareNotFound(_, _, let l), .interrupted(let l):
            l
        }
    }

    /// The same error with user record names (`_7d1f…`) and emails replaced by the recipe's handles, which is
    /// how a recipe's reader knows its users.
    func naming(_ handles: [String: String]) -> LaneError {
        // The longest first: one email may end with another (`ann@x.com`, `joann@x.com`).
        let names = handles.sorted { ($0.key.count, $0.key) > ($1.key.count, $1.key) }
        func named(_ text: String) -> String {
            names.reduce(text) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
        }
        switch self {
        case .expectationFailed(let expected, let found, let l):
            return .expectationFailed(expected: named(expected), found: named(found), location: l)
        case .stepFailed(let action, let reason, let l):
            return .stepFailed(action: action, reason: named(reason), location: l)
        default:
            return self
        }
    }

    /// The same error with how a `within:` step retried it (`tried 9 times over 2.0 s`), said after what
    /// the last try found.
    func retried(_ note: String) -> LaneError {
        switch self {
        case .expectationFailed(let expected, let found, let l):
            return .expectationFailed(expected: expected, found: "\(found); \(note)", location: l)
        case .stepFailed(let action, let reason, let l):
            return .stepFailed(action: action, reason: "\(reason); \(note)", location: l)
        case .shareNotFound(let what, let hint, let l):
            return .shareNotFound(what: what, hint: "\(hint); \(note)", location: l)
        default:
            return self
        }
    }

    /// What went wrong, without where (`expectation failed: expected …`): the `error` hook's `${lane_error}`.
    public var message: String {
        guard let location else { return description }
        for prefix in ["\(location): error: ", "\(location): "] where description.hasPrefix(prefix) {
            return String(description.dropFirst(prefix.count))
        }
        return description
    }

    public var description: String {
        switch self {
        case .unknownLane(let name, let available, let file):
            let list = available.isEmpty ? "it has no lanes" : "its lanes are: " + available.joined(separator: ", ")
            let hint = Suggestion.closest(to: name, in: available).map { "did you mean '\($0)'? " } ?? ""
            return "\(file): error: no lane named '\(name)'; \(hint)\(list) (sharelane lanes \(file) lists them)"
        case .privateLane(let name, let l):
            return "\(l): error: lane '\(name)' is private: it can only be called from another lane "
                + "(a step `- lane: \(name)`), not from the command line"
        case .laneCycle(let chain, let l):
            return "\(l): error: lanes call each other in a cycle: \(chain.joined(separator: " → "))"
        case .unknownUser(let handle, let l):
            return "\(l): error: '\(handle)' names no user of the recipe; declare it under `users:`"
        case .expectationFailed(let expected, let found, let l):
            return "\(l): error: expectation failed: expected \(expected), found \(found)"
        case .stepFailed(let action, let reason, let l):
            return "\(l): error: \(action) failed: \(reason)"
        case .resetRefused(let store, let l):
            return "\(l): error: reset refused: \(store) is Apple's service, whose data a lane never wipes; "
                + "reset empties a local store (sqlite: or memory:) or a sharelane serve (http:): run this lane "
                + "with --store pointing at one"
        case .shareNotFound(let what, let hint, let l):
            return "\(l): error: \(what); \(hint)"
        case .interrupted(let l):
            return "\(l): stopped before this step: the lane was asked to stop; neither it nor any step after it ran"
        }
    }
}
