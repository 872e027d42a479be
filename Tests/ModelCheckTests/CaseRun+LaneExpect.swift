import Lanes
import Recipe
import ShareKit

extension CaseRun {
    /// What a lane's `expect: { as, can, zone, record }` says about `user` writing or deleting `record`,
    /// asked through the real `LaneRunner` on the SQLite store before the operation runs: true when the lane
    /// judges it allowed, false when refused, nil when the lane cannot ask (a record the recipe does not
    /// declare fails validation of the step).
    func laneJudgement(can: String, user: String, zone: String, record: String) async throws -> Bool? {
        guard let declared = spec.zone(zone), !declared.absent,
            spec.records(in: zone).contains(where: { $0.record.name == record && !$0.record.absent })
        else { return nil }
        let step = "expect: { as: \(user), can: \(can), zone: \(zone), record: \(record), to_be: true }"
        let recipe = try CaseRunner.load(spec.yaml(lane: [step]))
        let report = try await LaneRunner(store: sides[0].store, output: .discard, logger: logger)
            .run(lane: "check", of: recipe)
        guard let failure = report.failure else { return true }
        guard "\(failure)".contains("expectation failed") else {
            throw Violation(invariant: "lane-expect-failed", detail: "\(step): \(failure)", step: -1)
        }
        return false
    }
}
