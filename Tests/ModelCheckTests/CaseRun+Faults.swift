import Applier
import Foundation
import PlanModel
import Planner
import Recipe
import ShareKit

// Serve's applies over a bad network (Docs/ModelCheck.md, "Faults"): each either completes or stops cleanly,
// and applying again converges to what the SQLite side (a good network) holds, nothing made twice.
extension CaseRun {
    /// Applies `plan` on `side`, counting the waits of serve's calls.
    func applyCounting(_ plan: Plan, side: StoreSide) async throws -> ApplyReport {
        let applier = PlanAndApply(store: side.store, logger: logger)
        guard faults != nil, side.label == "serve" else { return try await applier.apply(plan) }
        tally.applied()
        let tally = self.tally
        return try await StoreRetryListener.$current.withValue(StoreRetryListener { tally.wait($0) }) {
            try await applier.apply(plan)
        }
    }

    /// An apply over the bad network that did not complete: it must have stopped cleanly (every change it did
    /// not make was never attempted, or refused for now as `TRY_AGAIN_LATER` or `THROTTLED`: never a store
    /// answering a write made twice), and applying again, planned again as `sharelane apply` plans, must
    /// complete: over the bad network a few times, then over a good one.
    func finishStoppedApply(_ report: ApplyReport, side index: Int, prune: Bool, step: Int) async throws
        -> ApplyReport
    {
        tally.stopped()
        try expectCleanStop(report, step: step)
        var last = report
        for attempt in 1...5 {
            if attempt == 5 { try await faults?.off() }
            tally.reapplied()
            let file = try recipeFile()
            let recipe = try loadedRecipe()
            let plan = try await planStoppingCleanly(side: index, step: step) {
                if let file, index < self.caches.count {
                    return try await self.incrementalPlan(file, side: index, prune: prune)
                }
                return try await Planner(store: self.sides[index].store, logger: self.logger).plan(
                    recipe, users: self.directories[index], options: PlanOptions(prune: prune))
            }
            last = try await applyCounting(plan, side: sides[index])
            if last.succeeded { return last }
            try expectCleanStop(last, step: step)
        }
        return last
    }

    /// A plan of serve's side over the bad network: one whose reads could not get through (the retries
    /// spent) fails as the command would, saying so, and is made again: over the bad network a few times, then
    /// over a good one. A failure of any other kind is thrown as it is.
    func planStoppingCleanly(side index: Int, step: Int, _ plan: () async throws -> Plan) async throws -> Plan {
        guard faults != nil, sides[index].label == "serve" else { return try await plan() }
        for attempt in 1...5 {
            if attempt == 5 { try await faults?.off() }
            do {
                return try await plan()
            } catch  where attempt < 5 && Self.isNetworkFailure(error) {
                tally.stopped()
            }
        }
        return try await plan()
    }

    /// Whether an error is the network's, the retries spent: a store that stayed unavailable or throttling, or
    /// connections lost or refused.
    static func isNetworkFailure(_ error: any Error) -> Bool {
        let text = "\(error)"
        return text.contains(ServerErrorCode.tryAgainLater.rawValue)
            || text.contains(ServerErrorCode.throttled.rawValue)
    }

    private func expectCleanStop(_ report: ApplyReport, step: Int) throws {
        let unclean = CheckFaults.stoppedCleanly(report)
        guard unclean.isEmpty else {
            throw Violation(
                invariant: "apply-stopped-uncleanly",
                detail: "an apply over a bad network failed with the store's answer to a write, not the network's:\n"
                    + unclean.prefix(10).map { "  \($0)" }.joined(separator: "\n") + "\n" + report.line,
                step: step)
        }
    }

    /// No participant listed twice in a share and no two shares of one root, on any side, in the views last
    /// read (a lost answer's write made again would show so).
    func checkNothingMadeTwice(step: Int) throws {
        for (side, view) in zip(sides, views) {
            var roots: [String: Int] = [:]
            var zone = ""
            var database = ""
            for line in view.lines {
                if !line.hasPrefix(" ") { database = line }
                if line.hasPrefix("  zone ") { zone = database + line }
                guard line.hasPrefix("    share "),
                    let root = line.firstMatch(of: /root=(\S+)/).map({ String($0.1) }),
                    let people = line.firstMatch(of: /participants=\[(.*)\]/).map({ String($0.1) })
                else { continue }
                roots["\(zone) \(root)", default: 0] += 1
                let users = people.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                    .compactMap { $0.split(separator: ":").first.map(String.init) }
                if Set(users).count != users.count {
                    throw Violation(
                        invariant: "made-twice", detail: "\(side.label): a participant listed twice: \(line)",
                        step: step)
                }
            }
            if let twice = roots.first(where: { $0.value > 1 && !$0.key.hasSuffix(" -") }) {
                throw Violation(
                    invariant: "made-twice", detail: "\(side.label): two shares rooted at \(twice.key)", step: step)
            }
        }
    }
}
