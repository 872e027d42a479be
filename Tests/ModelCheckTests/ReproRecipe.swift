/// The text a failure prints: the seed, the broken promise, and the shrunk case as a recipe with a lane that
/// replays its actions, ready for `sharelane run check FILE --store memory:`.
enum ReproRecipe {
    static func render(seed: UInt64, checkCase: CheckCase, violation: Violation, report: CaseReport) -> String {
        var out = "# sharelane model check: case seed \(seed), \(checkCase.actions.count) action(s) after shrinking\n"
        out += "# rerun: SHARELANE_CHECK_CASE_SEED=\(seed) swift test --skip-build --filter ModelCheck\n"
        out += "# broken promise: \(violation.invariant) at step \(violation.step + 1)\n"
        for line in violation.detail.split(separator: "\n", omittingEmptySubsequences: false).prefix(40) {
            out += "#   \(line)\n"
        }
        if checkCase.recipe.yaml().contains("!asset ")
            || report.versions.contains(where: { $0.yaml.contains("!asset ") })
        {
            out +=
                "# assets: the recipe's `!asset \(CheckAssets.folder)/NAME` files are CheckAssets.bytes(NAME) "
                + "(Tests/ModelCheckTests/CheckAssets.swift), written beside the recipe\n"
        }
        out += "# actions:\n"
        for (index, action) in checkCase.actions.enumerated() { out += "#   \(index + 1). \(action)\n" }
        let steps = runnable(report.laneSteps, recipe: checkCase.recipe)
        out += checkCase.recipe.yaml(lane: steps.map { $0.hasPrefix("#") ? "{} \($0)" : $0 })
            .replacingOccurrences(of: "- {} #", with: "#")
        for (number, version) in report.versions.enumerated() {
            out +=
                "# --- recipe version \(number + 2), after step \(version.step + 1) (replace the file's keys above the lanes with these):\n"
            out += version.yaml.split(separator: "\n").map { "# \($0)" }.joined(separator: "\n") + "\n"
        }
        return out
    }

    /// The steps with those the first version of the recipe cannot validate made runnable: a step naming a
    /// record that only a later version declares (and no step saves) in the step's zone, as its record or as a
    /// save's parent, becomes a comment, and an expectation about such a record is asked of its zone (a refused
    /// write of a new record is refused in its zone too). Records are known per zone, as the validator knows
    /// them: a save in another zone does not make the name known.
    static func runnable(_ steps: [String], recipe: RecipeSpec) -> [String] {
        var known: Set<String> = []
        for zone in recipe.zones {
            for (record, _) in recipe.records(in: zone.name) { known.insert("\(zone.name)/\(record.name)") }
        }
        for step in steps where step.hasPrefix("save:") {
            if let zone = recordName(in: step, key: "zone: "), let name = recordName(in: step) {
                known.insert("\(zone)/\(name)")
            }
        }
        return steps.map { step in
            guard !step.hasPrefix("#"), let zone = recordName(in: step, key: "zone: ") else { return step }
            if let parent = recordName(in: step, key: "parent: "), !known.contains("\(zone)/\(parent)") {
                return "# (\(parent) is declared by a later version of the recipe) \(step)"
            }
            guard let name = recordName(in: step), !known.contains("\(zone)/\(name)") else { return step }
            if step.hasPrefix("expect:") && step.contains("can: write") {
                return step.replacingOccurrences(of: ", record: \(name)", with: "")
            }
            return "# (\(name) is declared by a later version of the recipe) \(step)"
        }
    }

    private static func recordName(in step: String, key: String = "record: ") -> String? {
        guard let range = step.range(of: key) else { return nil }
        return String(step[range.upperBound...].prefix { $0 != "," && $0 != " " && $0 != "}" })
    }
}
