import Foundation
import SharelaneTestSupport
import Recipe
import ShareKit
import ShareStoreSQLite
import Testing

/// The seeded, randomized, model-based checker: random valid recipes and random actions against
/// the SQLite store and a `sharelane serve` on loopback, checking the README's guarantees after every action.
///
/// `SHARELANE_CHECK_CASES` (default 200) and `SHARELANE_CHECK_SEED` set the run; `SHARELANE_CHECK_CASE_SEED`
/// reruns one case; `SHARELANE_CHECK_KNOWN_BUGS=1` opens the gates of `KnownBugs`. See Docs/ModelCheck.md.
@Suite struct ModelCheckTests {
    static let defaultSeed: UInt64 = 20_261_122
    // 200 cases take about 2 minutes on an idle 2-core machine (0.65 s a case, both stores; 1.5 s under load).
    static let defaultCases = 200

    @Test func generatedCasesKeepEveryPromise() async throws {
        let environment = ProcessInfo.processInfo.environment
        let cases = environment["SHARELANE_CHECK_CASES"].flatMap(Int.init) ?? Self.defaultCases
        let seed = environment["SHARELANE_CHECK_SEED"].flatMap(UInt64.init) ?? Self.defaultSeed
        let only = environment["SHARELANE_CHECK_CASE_SEED"].flatMap(UInt64.init)
        let bugs = KnownBugs.current
        let scratch = try TemporaryDirectory("modelcheck")
        let directory = scratch.url
        let sqlite = try SQLiteStore(
            path: directory.appendingPathComponent("direct.sqlite").path, logger: CaseRunner.logger)
        let backing = try SQLiteStore(
            path: directory.appendingPathComponent("serve.sqlite").path, logger: CaseRunner.logger)
        let clock = MovableClock()
        let summary = try await CheckEmulator.with(store: backing, clock: clock) { url in
            var runner = CaseRunner(
                sqlite: sqlite, serveBacking: backing, serveURL: url, apiToken: CheckEmulator.apiToken, bugs: bugs,
                cacheDirectory: directory)
            runner.clock = clock
            runner.faults = CheckFaults.from(environment: environment, serveURL: url, apiToken: CheckEmulator.apiToken)
            var summary = try await Self.check(runner: runner, cases: cases, seed: seed, only: only, bugs: bugs)
            summary.faults = runner.faults.map { _ in runner.tally.line }
            summary.faultRetries = runner.tally.retries
            return summary
        }
        print(summary.line)
        if let faults = summary.faults { print("model check \(faults)") }
        #expect(summary.ran == (only == nil ? cases : 1))
        if only == nil && cases >= 50 {
            // The access checks must meet both answers, or they check nothing.
            #expect(summary.refused > 0 && summary.refused < summary.direct)
            #expect(summary.laneJudgements > 0)
            // The existence-oracle probes must meet zones and records the caller may not see.
            #expect(summary.oracleProbes > 0)
            // Stopped applies must stop some applies part-way, or they test nothing.
            #expect(summary.stopsMidway > 0)
            // Serve's applies must meet the bad network, or the faults test nothing.
            if summary.faults != nil { #expect(summary.faultRetries > 0) }
        }
        #expect(summary.failures.isEmpty, "\(summary.failures.joined(separator: "\n\n"))")
    }

    struct Summary: Sendable {
        var ran = 0
        var actions = 0
        var skipped = 0
        var direct = 0
        var refused = 0
        var laneJudgements = 0
        var oracleProbes = 0
        var stopsAsked = 0
        var stopsMidway = 0
        var failures: [String] = []
        var seconds = 0.0
        var shrinkSeconds = 0.0
        /// What the bad network did (`FaultTally.line`); nil when the run had none.
        var faults: String?
        var faultRetries = 0
        var line: String {
            "model check: \(ran) cases, \(actions) actions (\(skipped) skipped; \(direct) direct operations, "
                + "\(refused) refused, \(laneJudgements) judged by a lane, \(oracleProbes) existence-oracle probes; "
                + "\(stopsAsked) applies asked to stop, "
                + "\(stopsMidway) of them part-way), \(failures.count) failure(s) in "
                + String(format: "%.1f s (%.1f s of it shrinking)", seconds, shrinkSeconds)
        }
    }

    static func check(runner: CaseRunner, cases: Int, seed: UInt64, only: UInt64?, bugs: KnownBugs) async throws
        -> Summary
    {
        let start = Date()
        var summary = Summary()
        var brokenInvariants: Set<String> = []
        let seeds = only.map { [$0] } ?? (0..<cases).map { CheckRandom.caseSeed(run: seed, index: $0) }
        for caseSeed in seeds {
            let checkCase = CheckCase.generate(seed: caseSeed, bugs: bugs)
            let report = try await runner.run(checkCase)
            summary.ran += 1
            summary.actions += checkCase.actions.count
            summary.skipped += report.skipped
            summary.direct += report.directOperations
            summary.refused += report.refusals
            summary.laneJudgements += report.laneJudgements
            summary.oracleProbes += report.oracleProbes
            summary.stopsAsked += report.stopsAsked
            summary.stopsMidway += report.stopsMidway
            guard let violation = report.violation else {
                // A failure's replay recipe must be runnable: every case's replay must validate (a load is
                // about 1% of a case's time).
                let text = ReproRecipe.render(
                    seed: caseSeed, checkCase: checkCase, violation: Violation(invariant: "none", detail: "", step: 0),
                    report: report)
                do {
                    _ = try CaseRunner.load(text)
                } catch {
                    summary.failures.append(
                        "the replay recipe of case seed \(caseSeed) does not validate: \(error)\n\(text)")
                }
                continue
            }
            // One shrunk example per broken promise: the rest of the run still looks for other ones.
            guard brokenInvariants.insert(violation.signature).inserted else {
                summary.failures.append("case seed \(caseSeed): \(violation.signature) again (not shrunk)")
                continue
            }
            let shrinkStart = Date()
            let shrinker = CaseShrinker(run: { try await runner.run($0).violation })
            let (small, smallViolation, runs) = try await shrinker.shrink(checkCase, violation)
            summary.shrinkSeconds += Date().timeIntervalSince(shrinkStart)
            let smallReport = try await runner.run(small)
            var text = ReproRecipe.render(
                seed: caseSeed, checkCase: small, violation: smallViolation, report: smallReport)
            do {
                _ = try CaseRunner.load(text)
            } catch {
                text += "# (this replay recipe does not validate: \(error))\n"
            }
            print("model check failure (run seed \(seed), shrunk in \(runs) runs):\n\(text)")
            summary.failures.append(text)
        }
        summary.seconds = Date().timeIntervalSince(start)
        return summary
    }

    @Test func theSameSeedGeneratesTheSameCase() {
        let a = CheckCase.generate(seed: 7, bugs: .gated)
        let b = CheckCase.generate(seed: 7, bugs: .gated)
        let c = CheckCase.generate(seed: 8, bugs: .gated)
        #expect(a == b)
        #expect(a != c)
    }

    @Test func everyGeneratedRecipeValidates() throws {
        var problems: [String] = []
        var checked = 0
        // Recipes of several owners, and among them one where an owner takes part in another owner's share.
        var severalOwners = 0
        var ownerTakesPart = 0
        for index in 0..<300 {
            for bugs in [KnownBugs.gated, .none] {
                let spec = CheckCase.generate(seed: CheckRandom.caseSeed(run: 1, index: index), bugs: bugs).recipe
                checked += 1
                do {
                    let recipe = try CaseRunner.load(spec.yaml())
                    if recipe.owners.count > 1 { severalOwners += 1 }
                    let owners = Set(recipe.owners)
                    if spec.declaredShares.contains(where: { shared in
                        shared.share.participants.contains {
                            owners.contains($0.handle) && $0.handle != spec.owner(ofZone: shared.zone)
                        }
                    }) && recipe.owners.count > 1 {
                        ownerTakesPart += 1
                    }
                } catch {
                    problems.append("\(error)\n\(spec.yaml())")
                }
            }
        }
        #expect(checked == 600)
        #expect(problems.isEmpty, "\(problems.prefix(3).joined(separator: "\n\n"))")
        #expect(severalOwners > 60, "\(severalOwners) of 600 recipes have several owners")
        #expect(ownerTakesPart > 20, "\(ownerTakesPart) recipes have an owner in another owner's share")
    }
}
