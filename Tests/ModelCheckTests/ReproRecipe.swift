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
        out += "# actions:\n"
        for (index, action) in checkCase.actions.enumerated() { out += "#   \(index + 1). \(action)\n" }
        out += checkCase.recipe.yaml(lane: report.laneSteps.map { $0.hasPrefix("#") ? "{} \($0)" : $0 })
            .replacingOccurrences(of: "- {} #", with: "#")
        for (number, version) in report.versions.enumerated() {
            out +=
                "# --- recipe version \(number + 2), after step \(version.step + 1) (replace the file's keys above the lanes with these):\n"
            out += version.yaml.split(separator: "\n").map { "# \($0)" }.joined(separator: "\n") + "\n"
        }
        return out
    }
}
