import ShareKit

/// One step of a generated case, run on every store under test.
enum CheckAction: Hashable, Sendable, CustomStringConvertible {
    /// Plan and apply the current recipe, as `sharelane apply --yes` does.
    case apply(prune: Bool)
    /// Plan only: must change nothing.
    case plan
    case accept(user: String, zone: String, root: String?)
    case leave(user: String, zone: String, root: String?)
    /// The owner deletes the share (CloudKit's "Stop Sharing").
    case stopSharing(zone: String, root: String?)
    /// A `forceUpdate` of one field by `user`: the owner in its private database (an edit behind the
    /// recipe's back), anyone else in its shared database.
    case save(user: String, zone: String, record: String, parent: String?, field: String, value: FieldValue)
    /// A `forceDelete` by `user`, in the same databases as `save`.
    case delete(user: String, zone: String, record: String)
    /// The recipe is edited, then applied.
    case mutate(RecipeMutation, prune: Bool)
    /// A plan is saved, the owner writes `record`, and the saved plan is applied: it must be refused.
    case stalePlan(zone: String, record: String)
    /// Export, load the export, plan it: no changes.
    case export
    /// The recipe edited (when a mutation is given), then its apply stopped part-way, after `after` of its
    /// progress reports: as SIGKILL leaves it (`kill`: the calls under way abandoned) or as a first Ctrl-C does
    /// (they finish). Then the steps of `then`, each a command of its own, then an apply: it must converge,
    /// and the plan after it must be empty (`CaseRun+Stops.swift`).
    case stoppedApply(RecipeMutation?, after: Int, kill: Bool, then: [AfterStop])

    /// What may come between a stopped apply and the apply that must converge.
    enum AfterStop: Hashable, Sendable, CustomStringConvertible {
        /// `sharelane plan`.
        case plan
        /// `sharelane run` of a lane whose step is `apply`.
        case lane
        /// `sharelane plan --out FILE`, then `sharelane apply FILE`.
        case savedPlan
        /// Another apply, stopped too.
        case stoppedApply(after: Int, kill: Bool)

        var description: String {
            switch self {
            case .plan: "plan"
            case .lane: "a lane's apply"
            case .savedPlan: "a saved plan applied"
            case .stoppedApply(let after, let kill): "an apply stopped again \(Self.how(after, kill))"
            }
        }

        static func how(_ after: Int, _ kill: Bool) -> String {
            "(\(kill ? "SIGKILL" : "Ctrl-C") after \(after) progress report\(after == 1 ? "" : "s"))"
        }
    }

    var description: String {
        switch self {
        case .apply(let prune): prune ? "apply --prune" : "apply"
        case .plan: "plan"
        case .accept(let u, let z, let r): "accept \(RecipeMutation.address(z, r)) as \(u)"
        case .leave(let u, let z, let r): "leave \(RecipeMutation.address(z, r)) as \(u)"
        case .stopSharing(let z, let r): "stop sharing \(RecipeMutation.address(z, r))"
        case .save(let u, let z, let r, let p, let f, let v):
            "save \(z)/\(r)" + (p.map { " (parent \($0))" } ?? "") + " \(f)=\(v.displayString) as \(u)"
        case .delete(let u, let z, let r): "delete \(z)/\(r) as \(u)"
        case .mutate(let m, let prune): "edit recipe: \(m), then apply" + (prune ? " --prune" : "")
        case .stalePlan(let z, let r): "save a plan, owner writes \(z)/\(r), apply the saved plan"
        case .export: "export, then plan the export"
        case .stoppedApply(let mutation, let after, let kill, let then):
            (mutation.map { "edit recipe: \($0), then " } ?? "")
                + "an apply stopped \(AfterStop.how(after, kill)), then "
                + (then.map(\.description) + ["apply"]).joined(separator: ", then ")
        }
    }

    /// The lane step that replays this action with `sharelane run`, or a comment where no step does; the
    /// owner's steps act as the owner of their zone.
    func laneStep(_ spec: RecipeSpec) -> String {
        func owner(_ zone: String) -> String { spec.owner(ofZone: zone) }
        func at(_ zone: String, _ root: String?) -> String { "zone: \(zone)" + (root.map { ", record: \($0)" } ?? "") }
        switch self {
        case .apply(let prune): return prune ? "apply: { prune: true }" : "apply"
        case .plan: return "plan"
        case .accept(let u, let z, let r): return "accept: { as: \(u), \(at(z, r)) }"
        case .leave(let u, let z, let r): return "leave: { as: \(u), \(at(z, r)) }"
        case .stopSharing(let z, let r): return "leave: { as: \(owner(z)), \(at(z, r)) }"
        case .save(let u, let z, let r, let p, let f, let v):
            let type = "type: \(Self.replayType)"
            let parent = p.map { ", parent: \($0)" } ?? ""
            return "save: { as: \(u), zone: \(z), record: \(r), \(type)\(parent), fields: { \(f): \(Self.yaml(v)) } }"
        case .delete(let u, let z, let r): return "delete: { as: \(u), zone: \(z), record: \(r) }"
        case .mutate(_, let prune): return prune ? "apply: { prune: true }" : "apply"
        case .stalePlan(let z, let r):
            return
                "save: { as: \(owner(z)), zone: \(z), record: \(r), type: \(Self.replayType), fields: { stale: \"x\" } }"
        case .export: return "export"
        case .stoppedApply:
            // A lane cannot stop an apply part-way: the replay says where, and goes on with the apply.
            return "# \(description) (Tests/EndToEndTests/StoppedApplyTests.swift stops one through serve)"
        }
    }

    /// Replay steps need a type; the runner keeps the live type, so the repro recipe names it per record.
    static let replayType = "TYPE"

    static func yaml(_ value: FieldValue) -> String {
        switch value {
        case .string(let s): "\"\(s)\""
        case .int64(let i): String(i)
        default: "\"\(value.displayString)\""
        }
    }
}
