import AsyncHTTPClient
import Emulator
import Foundation
import Logging
import NIOCore
import ShareKit
import SharelaneTestSupport
import Testing

/// `sharelane serve` as a bad network (Docs/CloudKit.md, "Rehearsing a bad network"), against a live server on
/// loopback with a real HTTP client: what a client sees of each fault, what the store holds afterwards, the
/// throttle, the seed, the latency, the `/_sharelane/faults` endpoint and the console's section.
@Suite(.serialized) struct NetworkFaultTests {
    typealias H = EmulatorHarness

    /// What a client saw: an HTTP answer, or a connection closed without one.
    enum Outcome: Equatable, CustomStringConvertible {
        case answered(Int)
        case closed

        var description: String {
            switch self {
            case .answered(let status): "\(status)"
            case .closed: "closed"
            }
        }
    }

    /// Sends a raw request: the answer, or the error of a connection that closed without one.
    static func attempt(
        _ base: String, _ path: String, query: [String: String], body: String? = nil, method: String = "POST"
    ) async -> (answer: H.Answer?, error: (any Error)?) {
        do {
            return (try await H.raw(base, path, query: query, body: body, method: method), nil)
        } catch {
            return (nil, error)
        }
    }

    static func outcome(_ attempt: (answer: H.Answer?, error: (any Error)?)) -> Outcome {
        attempt.answer.map { .answered($0.status) } ?? .closed
    }

    /// Whether an error is a connection that closed before an answer came (not an HTTP answer, not a timeout).
    static func isClosedConnection(_ error: (any Error)?) -> Bool {
        guard let error else { return false }
        if let client = error as? HTTPClientError { return client == .remoteConnectionClosed }
        return error is IOError || error is ChannelError
    }

    /// `POST /_sharelane/faults` with the API token.
    @discardableResult
    static func setConditions(_ base: String, _ json: String) async throws -> H.Answer {
        let answer = try await H.raw(base, "/_sharelane/faults", query: ["ckAPIToken": H.apiToken], body: json)
        #expect(answer.status == 200, "\(answer.text)")
        return answer
    }

    static func auth(_ token: String) -> [String: String] { ["ckAPIToken": H.apiToken, "ckWebAuthToken": token] }

    static func createBody(_ name: String) -> String {
        #"{"operations":[{"operationType":"create","record":{"recordName":"\#(name)","recordType":"Note","#
            + #""fields":{"title":{"value":"\#(name)"}}}}]}"#
    }

    /// Which of `names` the store holds in the user's private default zone, read with a clear network.
    static func stored(_ base: String, token: String, _ names: [String]) async throws -> Set<String> {
        let body = #"{"records":["# + names.map { #"{"recordName":"\#($0)"}"# }.joined(separator: ",") + "]}"
        let answer = try await H.raw(
            base, H.databasePath("private", "records/lookup"), query: auth(token), body: body)
        #expect(answer.status == 200, "\(answer.text)")
        let records = answer.json["records"] as? [[String: Any]] ?? []
        return Set(records.filter { $0["serverErrorCode"] == nil }.compactMap { $0["recordName"] as? String })
    }

    /// The `fault=` of each logged request whose line holds `path`, in the order they were logged.
    static func faults(_ lines: [String], _ path: String) -> [String] {
        lines.filter { $0.contains(path) }.compactMap { line in
            line.firstMatch(of: /"fault": ([a-z-]+)/).map { String($0.1) }
        }
    }

    /// Waits (up to `TestDeadlines.event`) until `condition` holds: a request that closes its connection is logged just
    /// after, so a test reads the log once the line is there rather than at once.
    static func waitUntil(_ condition: () -> Bool) async {
        _ = await TestDeadlines.poll(within: TestDeadlines.event, condition)
    }

    /// The logged line of the first request whose line holds `path`, once it is there.
    static func line(_ log: LogLines, _ path: String) async -> String? {
        await waitUntil { log.all.contains { $0.contains(path) } }
        return log.all.first { $0.contains(path) }
    }

    static func withLoggedEmulator<T: Sendable>(
        _ conditions: NetworkConditions = .none, clock: EmulatorClock = .system,
        _ body: @Sendable (String, LogLines) async throws -> T
    ) async throws -> T {
        let lines = LogLines()
        let logger = Logger(label: "sharelane.test") { _ in CapturingLogHandler(lines: lines) }
        return try await H.withEmulator(clock: clock, networkConditions: conditions, logger: logger) { base in
            try await body(base, lines)
        }
    }

    // MARK: - Faults

    @Test(
        "unavailable: 503 TRY_AGAIN_LATER with a whole retryAfter, nothing stored; the console and the endpoint stay up"
    )
    func unavailableAnswers503AndStoresNothing() async throws {
        try await Self.withLoggedEmulator { base, log in
            let alice = try await H.signIn(base, "alice@example.com")
            try await Self.setConditions(base, #"{"faults": "unavailable=100%"}"#)
            let answer = try await H.raw(
                base, H.databasePath("private", "records/modify"), query: Self.auth(alice.token),
                body: Self.createBody("refused"))
            #expect(answer.status == 503)
            #expect(answer.json["serverErrorCode"] as? String == "TRY_AGAIN_LATER")
            let retryAfter = try #require(answer.json["retryAfter"] as? NSNumber, "\(answer.text)")
            #expect(retryAfter.doubleValue >= 1 && retryAfter.doubleValue == retryAfter.doubleValue.rounded())
            #expect(answer.json["uuid"] as? String != nil && answer.json["reason"] as? String != nil)
            // The console's pages are never faulted.
            let console = try await H.raw(base, "/console/signin", method: "GET")
            #expect(console.status == 200)
            // Nor is the endpoint: it clears the faults while they are at 100%.
            try await Self.setConditions(base, "{}")
            #expect(try await Self.stored(base, token: alice.token, ["refused"]).isEmpty)
            #expect(Self.faults(log.all, "records/modify") == ["unavailable"])
            // With a good network, lines say nothing of faults.
            #expect(Self.faults(log.all, "records/lookup") == [])
        }
    }

    @Test("reset: the client gets a closed connection, no answer, and the store is unchanged")
    func resetClosesBeforeTheRequestIsApplied() async throws {
        try await Self.withLoggedEmulator { base, log in
            let alice = try await H.signIn(base, "alice@example.com")
            try await Self.setConditions(base, #"{"faults": "reset=100%"}"#)
            let attempt = await Self.attempt(
                base, H.databasePath("private", "records/modify"), query: Self.auth(alice.token),
                body: Self.createBody("never"))
            #expect(attempt.answer == nil, "an HTTP answer came: \(attempt.answer?.text ?? "")")
            #expect(Self.isClosedConnection(attempt.error), "\(String(describing: attempt.error))")
            try await Self.setConditions(base, #"{"faults": ""}"#)
            #expect(try await Self.stored(base, token: alice.token, ["never"]).isEmpty)
            let line = try #require(await Self.line(log, "records/modify"))
            #expect(line.contains("records/modify -"), "a reset has no status: \(line)")
            #expect(Self.faults(log.all, "records/modify") == ["reset"])
        }
    }

    @Test("lost-answer: the client gets a closed connection, yet the write is in the store")
    func lostAnswerAppliesThenCloses() async throws {
        try await Self.withLoggedEmulator { base, log in
            let alice = try await H.signIn(base, "alice@example.com")
            try await Self.setConditions(base, #"{"faults": "lost-answer=100%"}"#)
            let attempt = await Self.attempt(
                base, H.databasePath("private", "records/modify"), query: Self.auth(alice.token),
                body: Self.createBody("applied"))
            #expect(attempt.answer == nil, "an HTTP answer came: \(attempt.answer?.text ?? "")")
            #expect(Self.isClosedConnection(attempt.error), "\(String(describing: attempt.error))")
            try await Self.setConditions(base, "{}")
            #expect(try await Self.stored(base, token: alice.token, ["applied"]) == ["applied"])
            // A client that sends the create again learns that it was applied: CONFLICT, "record to insert already
            // exists", as the live service answers it.
            let again = try await H.raw(
                base, H.databasePath("private", "records/modify"), query: Self.auth(alice.token),
                body: Self.createBody("applied"))
            let record = (again.json["records"] as? [[String: Any]])?.first
            #expect(record?["serverErrorCode"] as? String == "CONFLICT", "\(again.text)")
            #expect((record?["reason"] as? String)?.contains("record to insert already exists") == true)
            // The log gives the status of the answer that was never sent.
            let line = try #require(await Self.line(log, "records/modify"))
            #expect(line.contains("records/modify 200"), "\(line)")
            #expect(Self.faults(log.all, "records/modify") == ["lost-answer"])
        }
    }

    // MARK: - Throttle

    @Test("throttle: past the rate a user gets 429 THROTTLED with retryAfter, the refused writes change nothing")
    func throttleRefusesPastTheRatePerUser() async throws {
        // A clock that stands still: every request falls in the same second, whatever the machine's speed.
        let clock = MovableClock()
        try await Self.withLoggedEmulator(
            NetworkConditions(throttle: RequestRate(requests: 3)), clock: clock.emulatorClock
        ) { base, log in
            // Sign-ins carry no user's token: they share one count (2 of 3).
            let alice = try await H.signIn(base, "alice@example.com")
            let bob = try await H.signIn(base, "bob@example.com")
            let names = (0..<10).map { "note-\($0)" }
            var statuses: [Int] = []
            for name in names {
                let answer = try await H.raw(
                    base, H.databasePath("private", "records/modify"), query: Self.auth(alice.token),
                    body: Self.createBody(name))
                statuses.append(answer.status)
                if answer.status == 429 {
                    #expect(answer.json["serverErrorCode"] as? String == "THROTTLED", "\(answer.text)")
                    let retryAfter = try #require(answer.json["retryAfter"] as? NSNumber, "\(answer.text)")
                    #expect(retryAfter.intValue >= 1 && retryAfter.doubleValue == Double(retryAfter.intValue))
                }
            }
            #expect(statuses == [200, 200, 200] + Array(repeating: 429, count: 7))
            // Bob has a count of his own.
            let bobs = try await H.raw(
                base, H.databasePath("private", "records/modify"), query: Self.auth(bob.token),
                body: Self.createBody("bobs"))
            #expect(bobs.status == 200, "\(bobs.text)")
            // A second later alice is admitted again, and only her first three writes were applied.
            clock.advance(by: .milliseconds(1_001))
            #expect(try await Self.stored(base, token: alice.token, names) == Set(names.prefix(3)))
            #expect(Self.faults(log.all, "records/modify").filter { $0 == "throttled" }.count == 7)
        }
    }

    // MARK: - Seed and latency

    /// What 24 reads of the public database met, as the client saw them and as the log says.
    static func playReads(_ base: String, _ log: LogLines) async -> (seen: [Outcome], logged: [String]) {
        let before = log.all.count
        var seen: [Outcome] = []
        for index in 1...24 {
            seen.append(
                outcome(
                    await attempt(
                        base, H.databasePath("public", "zones/list"), query: ["ckAPIToken": H.apiToken], method: "GET")
                ))
            await waitUntil { faults(Array(log.all.dropFirst(before)), "zones/list").count >= index }
        }
        return (seen, faults(Array(log.all.dropFirst(before)), "zones/list"))
    }

    @Test("the same seed meets the same faults in the same order; another seed others")
    func theSameSeedRepeatsTheFaults() async throws {
        try await Self.withLoggedEmulator { base, log in
            let settings = #"{"faults": "unavailable=25%,reset=25%,lost-answer=25%", "seed": 7}"#
            try await Self.setConditions(base, settings)
            let first = await Self.playReads(base, log)
            try await Self.setConditions(base, settings)
            let second = await Self.playReads(base, log)
            #expect(first.seen == second.seen)
            #expect(first.logged == second.logged)
            #expect(Set(first.logged) == ["none", "unavailable", "reset", "lost-answer"], "\(first.logged)")
            // What the client saw agrees with the log: a fault that closes the connection gives no answer.
            let expected = first.logged.map { fault -> Outcome in
                switch fault {
                case "none": .answered(200)
                case "unavailable": .answered(503)
                default: .closed
                }
            }
            #expect(first.seen == expected)
            try await Self.setConditions(base, #"{"faults": "unavailable=25%,reset=25%,lost-answer=25%", "seed": 8}"#)
            #expect(await Self.playReads(base, log).logged != first.logged)
        }
    }

    @Test("two serve processes started with the same --fault-seed meet the same faults in the same order")
    func theSameSeedRepeatsAcrossRuns() async throws {
        @Sendable func run() async throws -> (seen: [Outcome], logged: [String]) {
            let server = try await ServeProcess(
                apiToken: "seeded-run-token",
                extraArguments: ["--faults", "unavailable=25%,reset=25%,lost-answer=25%", "--fault-seed", "7"])
            defer { server.stop() }
            func logged() -> [String] { server.log.matches(of: /fault=([a-z-]+)/).map { String($0.1) } }
            var seen: [Outcome] = []
            for index in 1...16 {
                seen.append(
                    Self.outcome(
                        await Self.attempt(
                            server.url, H.databasePath("public", "zones/list"), query: ["ckAPIToken": server.apiToken],
                            method: "GET")))
                await Self.waitUntil { logged().count >= index }
            }
            return (seen, logged())
        }
        let first = try await run()
        let second = try await run()
        #expect(first.seen == second.seen)
        #expect(first.logged == second.logged)
        #expect(Set(first.logged) == ["none", "unavailable", "reset", "lost-answer"], "\(first.logged)")
    }

    @Test("with latency a request still succeeds, and its log line says it met no fault")
    func latencyDelaysWithoutFailing() async throws {
        try await Self.withLoggedEmulator(
            NetworkConditions(latency: Latency(milliseconds: 300, jitterMilliseconds: 100))
        ) {
            base, log in
            let alice = try await H.signIn(base, "alice@example.com")
            let answer = try await H.raw(
                base, H.databasePath("private", "records/modify"), query: Self.auth(alice.token),
                body: Self.createBody("slow"))
            #expect(answer.status == 200, "\(answer.text)")
            #expect(Self.faults(log.all, "records/modify") == ["none"])
            #expect(Self.faults(log.all, "/auth/signin") == ["none"])
        }
    }

    /// Lets sleepers through only once `expected` of them wait at the same time.
    actor Gate {
        let expected: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []
        private(set) var mostAtOnce = 0

        init(expected: Int) { self.expected = expected }

        func arrive() async {
            await withCheckedContinuation { continuation in
                waiting.append(continuation)
                mostAtOnce = max(mostAtOnce, waiting.count)
                if waiting.count >= expected { open() }
            }
        }

        func open() {
            for continuation in waiting { continuation.resume() }
            waiting = []
        }
    }

    @Test("many requests wait their latency at once: a wait holds no thread")
    func waitsDoNotHoldThreads() async throws {
        // Sixteen requests on a machine of two cores: the latency's sleeps open only once all sixteen wait at
        // the same moment, which they cannot while each holds a thread of the server.
        let count = 16
        let gate = Gate(expected: count)
        let clock = EmulatorClock(now: { ContinuousClock.now }, sleep: { _ in await gate.arrive() })
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: HTTPClient.Configuration(
                connectionPool: .init(idleTimeout: .seconds(10), concurrentHTTP1ConnectionsPerHostSoftLimit: count)))
        // Should the server ever hold threads, the gate opens after a while and the count below fails.
        let rescue = Task {
            try await Task.sleep(for: TestDeadlines.event)
            await gate.open()
        }
        defer { rescue.cancel() }
        let statuses = try await H.withEmulator(
            clock: clock, networkConditions: NetworkConditions(latency: Latency(milliseconds: 80))
        ) { base in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<count {
                    group.addTask {
                        let url =
                            base + H.databasePath("public", "zones/list") + "?ckAPIToken="
                            + H.percentEncoded(H.apiToken)
                        let response = try await client.execute(
                            HTTPClientRequest(url: url), timeout: .seconds(TestDeadlines.httpRead.components.seconds))
                        _ = try await response.body.collect(upTo: 1 << 20)
                        return Int(response.status.code)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        try await client.shutdown()
        #expect(statuses == Array(repeating: 200, count: count))
        #expect(await gate.mostAtOnce == count)
    }
}
