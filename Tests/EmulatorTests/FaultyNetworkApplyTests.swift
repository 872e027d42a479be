import Applier
import CloudKitWire
import Dispatch
@testable import Emulator
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import Logging
import PlanModel
import Planner
import Recipe
import ShareKit
import SharelaneTestSupport
import Testing

/// Plans and applies over a bad network (Docs/CloudKit.md, "Limits the client follows"): against a real
/// `sharelane serve` playing lost answers, throttling, unavailability and resets, an apply leaves the store
/// exactly as a fault-free apply leaves it, record by record with shares and participants, nothing made twice;
/// an apply that cannot go on stops cleanly and the next one finishes the job. The client waits out
/// `retryAfter` on a clock the emulator shares, so whole seconds of waiting cost nothing; no test reads the
/// time.
@Suite(.serialized) struct FaultyNetworkApplyTests {
    typealias H = EmulatorHarness

    // MARK: - The recipe, in two versions

    static let handles = ["alice", "bob", "carol", "dana"]
    static let publicRecords = ["card"]

    /// Version 1 creates zones, records, a zone-wide share, a hierarchy share, participants (accepted and
    /// not) and a public record; version 2 changes fields, deletes records, changes a participant's permission
    /// and removes one: creates, updates, deletes and share saves all meet the faults.
    static func recipe(version: Int) throws -> Recipe {
        let first = version == 1
        var lines = [
            "sharelane: 1",
            "name: bad-network",
            "users:",
            "  alice: { email: alice@example.com }",
            "  bob: { email: bob@example.com }",
            "  carol: { email: carol@example.com }",
            "  dana: { email: dana@example.com }",
            "owner: alice",
            "zones:",
            "  Lists:",
            "    share:",
            "      title: Lists",
            "      participants:",
            "        bob: read-write",
            "        carol: { permission: \(first ? "read-only" : "read-write"), accepted: false }",
            "    records:",
            "      \"item-{{i:02}}\": { repeat: \(first ? 40 : 30), type: Item, fields: { title: \"Item {{i}}\", n: \(version) } }",
            "  Trips:",
            "    prune: true",
            "    records:",
            "      italy:",
            "        type: Trip",
            "        fields: { name: \(first ? "Italy" : "Italia") }",
            "        share:",
            "          participants:",
            "            dana: read-only",
        ]
        if first { lines.append("            bob: read-write") }
        lines += [
            "        children:",
            "          \"day-{{i}}\": { repeat: \(first ? 12 : 8), type: Day, fields: { title: \"Day {{i}}\" } }",
        ]
        for zone in 1...5 {
            lines += [
                "  Z\(zone):", "    records:",
                "      \"r-{{i}}\": { repeat: 15, type: Note, fields: { v: \(version) } }",
            ]
        }
        lines += ["public:", "  records:", "    card: { type: Card, fields: { name: \"Alice \(version)\" } }"]
        return try RecipeLoader(environment: [:]).load(
            yaml: lines.joined(separator: "\n") + "\n", file: "bad-network.yaml")
    }

    // MARK: - Applying over a network

    /// What applying the versions in turn did, and what the store held after, read over a good network.
    struct Outcome: Sendable {
        var reports: [ApplyReport]
        var contents: StoreContents
        /// The plan after the last apply, over a good network: empty when the store converged.
        var planAfter: Plan
        /// The `fault=` of every request the emulator logged, by its path's operation.
        var faults: [(operation: String, fault: String)]
        var waits: [StoreRetry]
        var peakInFlight: Int
    }

    /// Applies each version in turn, through an emulator playing `conditions` from the start, each apply
    /// planned first as `sharelane apply` does; `between` runs before each apply with the emulator's base URL
    /// (to change the network mid-run); then the network is made good, the recipe planned again, and the
    /// store read as every user sees it.
    static func apply(
        _ versions: [Recipe], conditions: NetworkConditions = .none, parallelism: Int = 1,
        progress: (@Sendable (String, ApplyProgress) -> Void)? = nil
    ) async throws -> Outcome {
        let clock = MovableClock()
        let lines = LogLines()
        let logger = Logger(label: "sharelane.test") { _ in CapturingLogHandler(lines: lines) }
        let waits = Waits()
        return try await H.withEmulator(clock: clock.emulatorClock, networkConditions: conditions, logger: logger) {
            base in
            let store = H.store(base, retryClock: clock.retryClock, parallelism: parallelism)
            var reports: [ApplyReport] = []
            for recipe in versions {
                let plan = try await Planner(store: store, logger: H.quiet, parallelism: parallelism).plan(recipe)
                let applier = Applier(store: store, logger: H.quiet, parallelism: parallelism)
                reports.append(
                    try await applier.apply(plan) { step in
                        if let wait = step.waiting { waits.add(wait) }
                        progress?(base, step)
                    })
            }
            try await setConditions(base, "{}")
            let last = try #require(versions.last)
            let planAfter = try await Planner(store: store, logger: H.quiet).plan(last)
            let contents = try await read(store)
            return Outcome(
                reports: reports, contents: contents, planAfter: planAfter, faults: faults(lines.all),
                waits: waits.all, peakInFlight: await store.peakRequestsInFlight)
        }
    }

    /// Every user's view of the store, and the public records.
    static func read(_ store: WebServicesStore) async throws -> StoreContents {
        var users: [(String, UserRecordName)] = []
        for handle in handles {
            let user = try #require(try await store.signInExisting(email: "\(handle)@example.com"))
            users.append((handle, user.recordName))
        }
        return try await StoreContents.read(store, users: users, publicRecords: publicRecords)
    }

    /// The contents a good network leaves after applying `versions`.
    static func faultFree(_ versions: [Recipe]) async throws -> StoreContents {
        let outcome = try await apply(versions)
        #expect(outcome.reports.allSatisfy { $0.succeeded }, "\(outcome.reports.map(\.line))")
        return outcome.contents
    }

    @discardableResult
    static func setConditions(_ base: String, _ json: String) async throws -> H.Answer {
        let answer = try await H.raw(base, "/_sharelane/faults", query: ["ckAPIToken": H.apiToken], body: json)
        #expect(answer.status == 200, "\(answer.text)")
        return answer
    }

    /// Sets the conditions from inside a synchronous progress callback. URLSession answers on a queue of its
    /// own, so the wait holds no thread that a task (the apply's, another test's) needs to reach the answer.
    static func setConditionsNow(_ base: String, _ json: String) {
        var components = URLComponents(string: base + "/_sharelane/faults")
        components?.queryItems = [URLQueryItem(name: "ckAPIToken", value: H.apiToken)]
        guard let url = components?.url else {
            Issue.record("not a URL: \(base)")
            return
        }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = Data(json.utf8)
        let status = StatusBox()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { _, response, _ in
            status.code = (response as? HTTPURLResponse)?.statusCode
            done.signal()
        }.resume()
        done.wait()
        #expect(status.code == 200, "POST /_sharelane/faults \(json)")
    }

    /// The status a URLSession callback hands to the thread waiting for it (the semaphore orders the two).
    final class StatusBox: @unchecked Sendable {
        var code: Int?
    }

    /// The operation and fault of each request line the emulator logged while conditions were in force.
    static func faults(_ lines: [String]) -> [(operation: String, fault: String)] {
        lines.compactMap { line in
            guard let fault = line.firstMatch(of: /"fault": ([a-z-]+)/).map({ String($0.1) }),
                let path = line.firstMatch(of: /(GET|POST) (\/[^ ]+)/).map({ String($0.2) })
            else { return nil }
            return (WebServicesTransportNames.operation(of: path), fault)
        }
    }

    /// The writes of an apply.
    static let writes: Set<String> = [
        "records/modify", "zones/modify", "records/accept", "schema/extend", "subscriptions/modify",
    ]

    /// The two versions' outcome on a bad network must be the good network's, with the fault met by a write
    /// on the way. (Which request meets a drawn fault depends on the order requests arrive, and the sign-ins
    /// of new participants overlap the writes: the rates are high enough that writes meet each fault.)
    static func expectSameAsFaultFree(_ outcome: Outcome, fault: String) async throws {
        let expected = try await faultFree([try recipe(version: 1), try recipe(version: 2)])
        #expect(outcome.reports.allSatisfy { $0.succeeded }, "\(outcome.reports.flatMap { $0.failureLines() })")
        #expect(
            outcome.faults.contains { writes.contains($0.operation) && $0.fault == fault },
            "no write met \(fault): \(outcome.faults.map { "\($0.operation) \($0.fault)" })")
        #expect(outcome.contents == expected, "\(expected.difference(from: outcome.contents))")
        #expect(outcome.contents.duplicates.isEmpty, "\(outcome.contents.duplicates)")
        #expect(outcome.planAfter.changes.isEmpty, "\(TextPlanRenderer().render(outcome.planAfter))")
    }

    // MARK: - Each fault leaves the store as a good network does

    @Test("lost answers: writes applied before their connection closed are read back, not made twice")
    func lostAnswersConverge() async throws {
        let outcome = try await Self.apply(
            [try Self.recipe(version: 1), try Self.recipe(version: 2)],
            conditions: NetworkConditions(faults: FaultRates(percent: [.lostAnswer: 30]) ?? FaultRates(), seed: 11))
        try await Self.expectSameAsFaultFree(outcome, fault: "lost-answer")
        #expect(outcome.waits.contains { $0.reason == .connectionLost })
    }

    @Test("a throttle: 429 THROTTLED is waited out for its retryAfter, and the apply says so on its progress")
    func throttlingIsWaitedOut() async throws {
        let outcome = try await Self.apply(
            [try Self.recipe(version: 1), try Self.recipe(version: 2)],
            conditions: NetworkConditions(throttle: RequestRate(requests: 6)), parallelism: 4)
        try await Self.expectSameAsFaultFree(outcome, fault: "throttled")
        let throttled = outcome.waits.filter { $0.reason == .throttled }
        #expect(!throttled.isEmpty)
        // CloudKit's retryAfter is whole seconds, at least 1: never waited less.
        #expect(throttled.allSatisfy { $0.seconds >= 1 }, "\(throttled)")
        #expect(throttled.allSatisfy { $0.description.hasPrefix("throttled, retrying in ") }, "\(throttled)")
    }

    @Test("503 TRY_AGAIN_LATER: sent again after retryAfter, nothing applied twice")
    func unavailabilityIsWaitedOut() async throws {
        let outcome = try await Self.apply(
            [try Self.recipe(version: 1), try Self.recipe(version: 2)],
            conditions: NetworkConditions(faults: FaultRates(percent: [.unavailable: 30]) ?? FaultRates(), seed: 5))
        try await Self.expectSameAsFaultFree(outcome, fault: "unavailable")
        #expect(outcome.waits.contains { $0.reason == .unavailable && $0.seconds >= 1 })
    }

    @Test("resets: a connection closed before the request was read is sent again")
    func resetsAreSentAgain() async throws {
        let outcome = try await Self.apply(
            [try Self.recipe(version: 1), try Self.recipe(version: 2)],
            conditions: NetworkConditions(faults: FaultRates(percent: [.reset: 30]) ?? FaultRates(), seed: 7))
        try await Self.expectSameAsFaultFree(outcome, fault: "reset")
    }

    @Test("every fault at once, several requests in flight: the same store, and never more requests than the bound")
    func everyFaultAtOnceWithParallelism() async throws {
        let outcome = try await Self.apply(
            [try Self.recipe(version: 1), try Self.recipe(version: 2)],
            conditions: NetworkConditions(
                latency: try Latency(parsing: "5ms"), throttle: RequestRate(requests: 20),
                faults: try FaultRates(parsing: "unavailable=10%,reset=10%,lost-answer=20%"), seed: 3),
            parallelism: 4)
        try await Self.expectSameAsFaultFree(outcome, fault: "lost-answer")
        #expect((2...4).contains(outcome.peakInFlight), "\(outcome.peakInFlight) requests at once")
    }

    // MARK: - A network that breaks mid-apply

    @Test(
        "the network breaks mid-apply: the apply stops cleanly, saying what was applied and what was not; the next apply finishes the job",
        arguments: [
            (#"{"faults": "unavailable=100%"}"#, "the store stayed unavailable past the retry budget"),
            (#"{"faults": "reset=100%"}"#, "the connection to the store was lost too often"),
        ])
    func breakMidApplyThenFinish(faults: String, cause: String) async throws {
        let recipe = try Self.recipe(version: 1)
        let expected = try await Self.faultFree([recipe])
        let clock = MovableClock()
        let broke = Flag()
        try await H.withEmulator(clock: clock.emulatorClock) { base in
            let store = H.store(base, retryClock: clock.retryClock, parallelism: 2)
            let plan = try await Planner(store: store, logger: H.quiet, parallelism: 2).plan(recipe)
            // Once the first batch of records is written, the network breaks for every request
            // (`POST /_sharelane/faults`), before the apply sends another.
            let first = try await Applier(store: store, logger: H.quiet, parallelism: 2).apply(plan) { step in
                guard step.message.hasPrefix("wrote"), broke.setOnce() else { return }
                Self.setConditionsNow(base, faults)
            }
            #expect(first.stopped != nil, "\(first.line)")
            #expect(first.line.hasPrefix("Apply stopped: \(cause);"), "\(first.line)")
            #expect(!first.applied.isEmpty && first.notAttempted > 0, "\(first.line)")
            let stopLines = first.stopLines()
            #expect(stopLines.contains { $0.hasPrefix("Applied before it stopped: ") && $0.contains("record") })
            #expect(stopLines.contains { $0.hasPrefix("Not applied: ") })
            // Mended: planning shows what is left, and applying it converges.
            try await Self.setConditions(base, "{}")
            let rest = try await Planner(store: store, logger: H.quiet).plan(recipe)
            #expect(!rest.changes.isEmpty && rest.changes.count < plan.changes.count)
            let second = try await Applier(store: store, logger: H.quiet).apply(rest)
            #expect(second.succeeded, "\(second.failureLines())")
            let after = try await Planner(store: store, logger: H.quiet).plan(recipe)
            #expect(after.changes.isEmpty, "\(TextPlanRenderer().render(after))")
            let contents = try await Self.read(store)
            #expect(contents == expected, "\(expected.difference(from: contents))")
            #expect(contents.duplicates.isEmpty, "\(contents.duplicates)")
        }
    }

    // MARK: - Only a resent write is read back

    /// A seed whose first draws of `rates` are `pattern`, found with the emulator's own draws.
    static func seed(startingWith pattern: [NetworkFault?], rates: FaultRates) throws -> UInt64 {
        for seed in UInt64(1)...100_000 {
            let faults = NetworkFaults(NetworkConditions(faults: rates, seed: seed), clock: .system)
            if pattern.allSatisfy({ faults.draw()?.fault == $0 }) { return seed }
        }
        throw ShareError(.internalError, "no seed starts with \(pattern)")
    }

    /// A serve whose retries wait on a movable clock, one request at a time, with alice signed in and her
    /// zone Z made.
    static func withAliceInZone(
        _ body: @Sendable (String, WebServicesStore, UserRecordName, ZoneID) async throws -> Void
    ) async throws {
        let clock = MovableClock()
        try await H.withEmulator(clock: clock.emulatorClock) { base in
            let store = H.store(base, retryClock: clock.retryClock, parallelism: 1)
            let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
            let zone = ZoneID(zoneName: "Z")
            _ = try await store.modifyZones([ZoneOperation(.create, zone)], in: .private, as: alice)
            try await body(base, store, alice, zone)
        }
    }

    /// Serve applies the next request and loses its answer; the two after it (the resend and its read-back)
    /// get through.
    static func loseTheNextAnswer(_ base: String) async throws {
        let rates = FaultRates(percent: [.lostAnswer: 50]) ?? FaultRates()
        let seed = try seed(startingWith: [.lostAnswer, nil, nil], rates: rates)
        try await setConditions(base, #"{"faults": "lost-answer=50%", "seed": \#(seed)}"#)
    }

    @Test("a resent write that meets EXISTS or CONFLICT counts as done only when the store holds what it sent")
    func onlyResentWritesAreReadBack() async throws {
        try await Self.withAliceInZone { base, store, alice, zone in
            func record(_ name: String, _ title: String, tag: String? = nil) -> Record {
                Record(
                    recordName: name, recordType: "Note", zoneID: zone, fields: ["title": .string(title)],
                    changeTag: tag)
            }
            let setup = try await store.modifyRecords(
                [
                    .init(.create, record("theirs", "someone else's")), .init(.create, record("old", "before")),
                    .init(.create, record("gone", "x")),
                ], in: zone, database: .private, atomic: false, as: alice)
            let tags = setup.map { $0.savedRecord?.changeTag }
            // On a good network a create of an existing record is the caller's error.
            let fresh = try await store.modifyRecords(
                [.init(.create, record("theirs", "mine"))], in: zone, database: .private, atomic: false, as: alice)
            #expect(fresh.first?.error?.code == .exists)

            // The next request's answer is lost after it was applied; it is sent again, then read back.
            try await Self.loseTheNextAnswer(base)
            let outcomes = try await store.modifyRecords(
                [
                    .init(.create, record("theirs", "mine")),  // exists with other fields: EXISTS stands
                    .init(.create, record("new", "mine")),  // made by the lost attempt: read back, saved
                    .init(.update, record("old", "after", tag: tags[1])),  // CONFLICT on resend: saved
                    .init(.delete, record("gone", "", tag: tags[2])),  // NOT_FOUND on resend: deleted
                ], in: zone, database: .private, atomic: false, as: alice)
            try await Self.setConditions(base, "{}")
            #expect(outcomes[0].error?.code == .exists, "\(outcomes[0])")
            #expect(outcomes[1].savedRecord?.fields["title"] == .string("mine"), "\(outcomes[1])")
            #expect(outcomes[2].savedRecord?.fields["title"] == .string("after"), "\(outcomes[2])")
            #expect(outcomes[3] == .deleted(recordName: "gone"), "\(outcomes[3])")
            let now = try await store.lookupRecords(
                ["theirs", "new", "old", "gone"], in: zone, database: .private, as: alice)
            #expect(
                now.map { $0.savedRecord?.fields["title"] } == [
                    .string("someone else's"), .string("mine"), .string("after"), nil,
                ])
        }
    }

    @Test(
        "a hierarchy share's deletion whose answer was lost is settled when sent again (the store answers NOT_FOUND, as for any record)"
    )
    func lostShareDeletionIsSettled() async throws {
        try await Self.withAliceInZone { base, store, alice, zone in
            let saved = try await store.modifyRecords(
                [
                    .init(.create, Record(recordName: "root", recordType: "Note", zoneID: zone)),
                    .init(.create, share: Share(recordName: "", zoneID: zone, rootRecordName: "root")),
                ], in: zone, database: .private, atomic: false, as: alice)
            guard case .savedShare(let share)? = saved.last else {
                Issue.record("the share was not saved: \(saved)")
                return
            }
            // On a good network, deleting a share that is gone is NOT_FOUND, as for any record.
            let missing = try await store.modifyRecords(
                [.init(.delete, share: Share(recordName: "share-nobody", zoneID: zone, changeTag: "1"))], in: zone,
                database: .private, atomic: false, as: alice)
            #expect(missing.first?.error?.code == .notFound, "\(missing)")
            // The deletion's answer is lost; sent again, it is settled as done.
            try await Self.loseTheNextAnswer(base)
            let deleted = try await store.modifyRecords(
                [
                    .init(
                        .delete,
                        share: Share(
                            recordName: share.recordName, zoneID: zone, rootRecordName: "root",
                            changeTag: share.changeTag))
                ],
                in: zone, database: .private, atomic: false, as: alice)
            try await Self.setConditions(base, "{}")
            #expect(deleted == [.deleted(recordName: share.recordName)], "\(deleted)")
            let root = try await store.lookupRecords(["root"], in: zone, database: .private, as: alice)
            #expect(root.first?.savedRecord?.shareRecordName == nil)
        }
    }

    // MARK: - The retry policy

    @Test("the retry policy never waits less than retryAfter, spreads waits, and stops at its attempts or budget")
    func retryPolicyBounds() {
        let policy = RetryPolicy(maxAttempts: 4, baseDelay: 0.5, maxDelay: 4, totalWait: 10)
        for draw in [0.0, 0.3, 0.999] {
            let wait = policy.wait(afterAttempt: 1, retryAfter: 3, waited: 0, draw: draw)
            #expect(wait.map { $0 >= 3 && $0 <= 3.75 } == true, "\(String(describing: wait))")
        }
        #expect(
            policy.wait(afterAttempt: 1, retryAfter: 3, waited: 0, draw: 0)
                != policy.wait(afterAttempt: 1, retryAfter: 3, waited: 0, draw: 0.9))
        // Backoff without retryAfter: 0.5, 1, 2, then capped at 4, each with up to a quarter more.
        #expect(policy.wait(afterAttempt: 2, retryAfter: nil, waited: 0, draw: 0) == 1)
        #expect(policy.backoff(afterAttempt: 6) == 4)
        // The attempts: the fourth is the last.
        #expect(policy.wait(afterAttempt: 4, retryAfter: nil, waited: 0, draw: 0) == nil)
        // The budget: a retryAfter that does not fit ends the retries; it is never cut short.
        #expect(policy.wait(afterAttempt: 1, retryAfter: 11, waited: 0, draw: 0) == nil)
        #expect(policy.wait(afterAttempt: 2, retryAfter: 3, waited: 8, draw: 0) == nil)
        #expect(policy.wait(afterAttempt: 2, retryAfter: 2, waited: 8, draw: 0.9) == 2)
    }
}

/// Waits a store reported, collected from its calls' tasks.
final class Waits: @unchecked Sendable {
    private let lock = NSLock()
    private var waits: [StoreRetry] = []

    func add(_ wait: StoreRetry) { lock.withLock { waits.append(wait) } }
    var all: [StoreRetry] { lock.withLock { waits } }
}

/// A flag set once, from any task.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var set = false

    /// Sets the flag; true the first time only.
    func setOnce() -> Bool {
        lock.withLock {
            defer { set = true }
            return !set
        }
    }
}

/// The operation of a request path, as the client names it in its waits.
enum WebServicesTransportNames {
    static func operation(of path: String) -> String {
        let parts = path.split(separator: "/")
        guard path.hasPrefix("/database/") || path.hasPrefix("/device/"), parts.count >= 2 else { return path }
        return parts.suffix(2).joined(separator: "/")
    }
}
