import ShareKit

/// The lanes' part of the whole-recipe check: every step's users, zones, records and called lanes declared,
/// and no lane calling itself.
extension RecipeValidator {
    mutating func checkLanes(
        _ recipe: Recipe, zoneNames: Set<String>, knownRecords: [String: Set<String>],
        savedRecords: [String: Set<String>]
    ) {
        let laneNames = recipe.lanes.map(\.name)
        var seen = Set<String>()
        for lane in recipe.lanes {
            if seen.contains(lane.name) { error("lane `\(lane.name)` is declared twice", lane.location) }
            seen.insert(lane.name)
        }
        func checkZone(_ zone: String, _ location: SourceLocation) -> Bool {
            if zoneNames.contains(zone) { return true }
            error(
                "zone `\(zone)` is not declared in the recipe" + Suggestion.hint(for: zone, in: Array(zoneNames)),
                location)
            return false
        }
        // A step that acts as a user (accept, leave, save, delete, expect, query, subscribe) names one of the
        // recipe's zones unless it says the zone is another recipe's or the app's (`undeclared: true`): a
        // mistyped zone would otherwise make a check that cannot fail (`to_be: false` on a zone that is not
        // there).
        func liveZone(_ zone: String, _ step: Step) -> Bool {
            if zoneNames.contains(zone) { return true }
            // A lane's value (`${NAME}`) names the zone only when the step runs.
            if zone.contains("${") || step.zoneIsUndeclared { return false }
            let nearest = Suggestion.hint(for: zone, in: Array(zoneNames))
            error(
                "zone `\(zone)` is not declared in the recipe" + (nearest.isEmpty ? "." : nearest)
                    + " If it is another recipe's or the app's zone, say so with `undeclared: true` on the step",
                step.location(of: "zone"))
            return false
        }
        func checkRecord(_ zone: String, _ record: String, _ location: SourceLocation) {
            let known = knownRecords[zone, default: []]
            if !known.contains(record), !record.contains("${") {
                error(
                    "record `\(record)` is not declared in zone `\(zone)` nor saved by a step"
                        + Suggestion.hint(for: record, in: Array(known)),
                    location)
            }
        }
        for step in allSteps(recipe) {
            if let actor = step.actor { checkUser(actor, "`as:`", step.location(of: "as")) }
            switch step.action {
            case .plan(_, let only), .apply(_, let only):
                for zone in only { _ = checkZone(zone, step.location) }
                if let actor = step.actor, actor != recipe.owner, recipe.user(actor) != nil {
                    // The plan and the apply write the owner's zones and shares as the owner; acting as
                    // someone else happens in the steps that act as a participant.
                    let verb = if case .plan = step.action { "plan" } else { "apply" }
                    error(
                        "`\(verb)` runs as the recipe's owner (`\(recipe.owner)`), not as `\(actor)`: remove `as: \(actor)`, or act as \(actor) with `save`, `delete`, `accept`, `leave` or `expect` steps",
                        step.location)
                }
            case .export(_, let zones):
                for zone in zones { _ = checkZone(zone, step.location) }
            case .accept(let zone, let record), .leave(let zone, let record):
                guard liveZone(zone, step) else { break }
                if let record {
                    if let declared = recipe.zone(zone)?.records.first(where: { $0.name == record }) {
                        if case .share = declared.share {
                        } else {
                            error(
                                "record `\(record)` of zone `\(zone)` roots no share to accept or leave",
                                step.location(of: "record"))
                        }
                    } else {
                        checkRecord(zone, record, step.location(of: "record"))
                    }
                }
            case .removeParticipant(let zone, let record, let participant),
                .changePermission(let zone, let record, let participant, _):
                checkUser(participant, "participant", step.location(of: "participant"))
                if participant == recipe.owner(ofZone: zone) {
                    error(
                        "`\(participant)` owns the share of zone `\(zone)`: the owner is not a participant to "
                            + "remove or give a permission; to stop sharing, `- leave: { zone: \(zone) }` as the owner",
                        step.location(of: "participant"))
                }
                guard liveZone(zone, step), let record else { break }
                if let declared = recipe.zone(zone)?.records.first(where: { $0.name == record }) {
                    if case .share = declared.share {
                    } else {
                        error(
                            "record `\(record)` of zone `\(zone)` roots no share to change",
                            step.location(of: "record"))
                    }
                } else {
                    checkRecord(zone, record, step.location(of: "record"))
                }
            case .save(let zone, _, _, let parent, _):
                if liveZone(zone, step), let parent { checkRecord(zone, parent, step.location(of: "parent")) }
            case .delete(let zone, let record):
                if liveZone(zone, step) { checkRecord(zone, record, step.location(of: "record")) }
            case .expect where step.database == .public:
                break
            case .acceptURL:
                break
            case .expect(let expectation):
                switch expectation {
                case .access(_, let zone, let record, _):
                    if liveZone(zone, step), let record { checkRecord(zone, record, step.location(of: "record")) }
                case .records(let zone, _):
                    _ = liveZone(zone, step)
                case .field(let zone, let record, _, _):
                    if liveZone(zone, step) { checkRecord(zone, record, step.location(of: "record")) }
                case .notified:
                    break
                }
            case .lane(let name, let parameters):
                for key in parameters.keys.sorted() where runtimeNames.contains(key) {
                    error(
                        RecipeLoader.runtimeNameMessage(
                            key, registered: registeredNames, as: "this step's parameter sets it"),
                        step.location(of: "parameters.\(key)"))
                }
                if let variableNames {
                    for key in parameters.keys.sorted()
                    where !variableNames.contains(key) && !runtimeNames.contains(key) {
                        error(
                            "parameter `\(key)` names no variable of the recipe"
                                + Suggestion.hint(for: key, in: Array(variableNames))
                                + "; a lane's parameters set variables the recipe declares under `vars:` or uses as "
                                + "`${NAME}`", step.location(of: "parameters.\(key)"))
                    }
                }
                if !laneNames.contains(name) {
                    error(
                        "lane `\(name)` is not declared" + Suggestion.hint(for: name, in: laneNames),
                        step.location(of: "name"))
                }
            case .query(let query):
                if query.zone != defaultZoneName { _ = liveZone(query.zone, step) }
            case .reset, .deploySchema, .sh, .outside:
                break
            case .subscribe(let subscribe):
                if let zone = subscribe.zone { _ = liveZone(zone, step) }
            }
        }
        // Lanes that call each other in a circle would never end.
        var calls: [String: [String]] = [:]
        for lane in recipe.lanes {
            calls[lane.name] = lane.steps.compactMap {
                if case .lane(let n, _) = $0.action { return n } else { return nil }
            }
        }
        var state: [String: Int] = [:]  // 1 visiting, 2 done
        var reported = false
        func visit(_ name: String, _ path: [String]) {
            if reported { return }
            if state[name] == 1 {
                if let lane = recipe.lane(path.first ?? name) {
                    let start = path.firstIndex(of: name) ?? 0
                    error(
                        "lanes call each other in a cycle: " + (path[start...] + [name]).joined(separator: " → "),
                        lane.location)
                }
                reported = true
                return
            }
            if state[name] == 2 { return }
            state[name] = 1
            for callee in calls[name] ?? [] where calls[callee] != nil { visit(callee, path + [name]) }
            state[name] = 2
        }
        for lane in recipe.lanes { visit(lane.name, []) }
    }
}
