import Recipe
import ShareKit

/// The one-line description of a step, as the runner prints it: `accept FamilyLists as bob`.
enum StepSummary {
    static func text(of step: Step, owner: String) -> String {
        let actor = step.actor.flatMap { $0 == owner ? nil : $0 }
        let who = actor.map { " as \($0)" } ?? ""
        switch step.action {
        case .plan(let prune, let only):
            return "plan" + options(prune: prune, only: only) + who
        case .apply(let prune, let only):
            return "apply" + options(prune: prune, only: only) + who
        case .accept(let zone, let record):
            return "accept \(address(zone, record))" + who
        case .acceptURL(let url):
            return "accept \(url)" + who
        case .leave(let zone, let record):
            return "leave \(address(zone, record))" + who
        case .removeParticipant(let zone, let record, let participant):
            return "remove \(participant) from \(address(zone, record))" + who
        case .changePermission(let zone, let record, let participant, let permission):
            return "permission of \(participant) on \(address(zone, record)) to \(permission.recipeName)" + who
        case .save(let zone, let record, let type, _, _):
            return "save \(type) \(zone)/\(record)" + who + environment(step)
        case .delete(let zone, let record):
            return "delete \(zone)/\(record)" + who + environment(step)
        case .expect(let expectation):
            return "expect " + text(of: expectation, actor: step.actor ?? owner, isPublic: step.database == .public)
        case .export(let out, let zones):
            let scope = zones.isEmpty ? "" : " " + zones.joined(separator: ", ")
            return "export\(scope)" + (out.map { " to \($0)" } ?? "") + who
        case .reset:
            return "reset" + who
        case .lane(let name, let parameters):
            return "lane \(name)" + self.parameters(parameters)
        case .query(let query):
            return "query \(QueryRun.summary(query))" + who + environment(step)
        case .deploySchema:
            return "deploy schema to production" + who
        case .sh(let shell):
            switch shell.command {
            case .shell(let line): return "sh \(line)"
            case .arguments(let words): return "sh " + words.joined(separator: " ")
            }
        case .outside(let action):
            return action.name + who
        case .subscribe(let subscribe):
            return "subscribe \(subscribe.subscriptionID) (\(subscribe.kind.rawValue)"
                + (subscribe.zone.map { " \($0)" } ?? "") + (subscribe.recordType.map { " \($0)" } ?? "")
                + ") in \(subscribe.database.rawValue)" + who
        }
    }

    /// ` in production` for a step that acts in another environment than the recipe's.
    static func environment(_ step: Step) -> String {
        step.environment.map { " in \($0.rawValue)" } ?? ""
    }

    static func text(of expectation: Expectation, actor: String, isPublic: Bool = false) -> String {
        switch expectation {
        case .access(let can, _, let record?, let toBe) where isPublic:
            return "\(actor) \(toBe ? "can" : "cannot") \(can.rawValue) public \(record)"
        case .field(_, let record, let name, let equals) where isPublic:
            return "\(actor) sees public \(record).\(name) = \(equals.displayString)"
        case .access(let can, let zone, let record, let toBe):
            return "\(actor) \(toBe ? "can" : "cannot") \(can.rawValue) \(address(zone, record))"
        case .records(let zone, let count):
            return "\(actor) sees \(count) record\(count == 1 ? "" : "s") in \(zone)"
        case .field(let zone, let record, let name, let equals):
            return "\(actor) sees \(zone)/\(record).\(name) = \(equals.displayString)"
        case .notified(let subscription, let toBe):
            return "\(actor) \(toBe ? "was" : "was not") notified by \(subscription)"
        }
    }

    static func address(_ zone: String, _ record: String?) -> String {
        record.map { "\(zone)/\($0)" } ?? zone
    }

    static func parameters(_ parameters: [String: String]) -> String {
        guard !parameters.isEmpty else { return "" }
        return " (" + parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
            + ")"
    }

    private static func options(prune: Bool, only: [String]) -> String {
        var parts: [String] = []
        if prune { parts.append("--prune") }
        if !only.isEmpty { parts.append("only " + only.joined(separator: ", ")) }
        return parts.isEmpty ? "" : " " + parts.joined(separator: " ")
    }
}
