import CloudKitWire
import Emulator
import Foundation
import Logging
import ShareKit
import SharelaneTestSupport
import Testing

/// One budget of retries for one request of the HTTP store (Docs/CloudKit.md, "Limits the client follows"):
/// against a real `sharelane serve` playing faults, a save whose asset's upload loses its connection, whose
/// new upload URL's request is refused and whose `records/modify` is refused, waits no more, in attempts and
/// seconds, than the retry policy allows one request, and uploads its asset's bytes once.
@Suite(.serialized) struct RetryBudgetTests {
    typealias H = EmulatorHarness

    static let picture = Data((0..<3000).map { UInt8($0 % 251) })

    /// Where `save` finds the local file its record's asset names: the scratch folder's `pic.png`.
    @TaskLocal static var pictureFile: String?

    /// A serve with the faults off, alice's zone Z, and an HTTP store of `policy` waiting on a movable clock,
    /// its asset files found in a scratch folder holding `pic.png`; the serve's log lines are kept.
    static func withStore(
        _ policy: RetryPolicy,
        _ body:
            @Sendable (String, WebServicesStore, UserRecordName, ZoneID, MovableClock, LogLines) async throws -> Void
    ) async throws {
        let clock = MovableClock()
        let lines = LogLines()
        let logger = Logger(label: "sharelane.test") { _ in CapturingLogHandler(lines: lines) }
        try await TemporaryDirectory.with("retry-budget") { scratch in
            let file = scratch.file("pic.png")
            try picture.write(to: URL(fileURLWithPath: file))
            try await H.withEmulator(clock: clock.emulatorClock, logger: logger) { base in
                let store = WebServicesStore(
                    endpoint: .emulator(
                        url: base, apiToken: H.apiToken, container: H.container, environment: H.environment),
                    retryPolicy: policy, parallelism: 1, retryClock: clock.retryClock, logger: H.quiet)
                let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
                let zone = ZoneID(zoneName: "Z")
                _ = try await store.modifyZones([ZoneOperation(.create, zone)], in: .private, as: alice)
                try await $pictureFile.withValue(file) { try await body(base, store, alice, zone, clock, lines) }
            }
        }
    }

    /// A record whose `image` is the local file `pic.png`, as a recipe's `!asset pic.png` loads it.
    static func photo(in zone: ZoneID) -> Record {
        Record(
            recordName: "p1", recordType: "Photo", zoneID: zone,
            fields: ["image": .assetID("pic.png#" + FNV1a64.checksum(of: picture))])
    }

    /// Serve's faults from now on: `rates`, drawn from a seed whose first draws are `pattern`.
    static func setFaults(_ base: String, _ rates: String, startingWith pattern: [NetworkFault?]) async throws {
        let seed = try FaultyNetworkApplyTests.seed(startingWith: pattern, rates: try FaultRates(parsing: rates))
        try await FaultyNetworkApplyTests.setConditions(base, #"{"faults": "\#(rates)", "seed": \#(seed)}"#)
    }

    /// The save, with the waits it told its task's listener.
    static func save(_ record: Record, _ store: WebServicesStore, as user: UserRecordName) async
        -> (outcomes: Result<[RecordOutcome], any Error>, waits: [StoreRetry])
    {
        let waits = Waits()
        let outcomes: Result<[RecordOutcome], any Error> = await StoreRetryListener.$current.withValue(
            StoreRetryListener { waits.add($0) }
        ) {
            do {
                let file = pictureFile
                let write = ZoneWrite(
                    [.init(.create, record)], in: record.zoneID, database: .private,
                    assetFiles: AssetFiles { _ in file })
                return .success(try await store.modifyRecords(write, as: user))
            } catch {
                return .failure(error)
            }
        }
        return (outcomes, waits.all)
    }

    @Test(
        "an asset's upload and the request for its new URL spend one budget: the save stops at the policy's attempts"
    )
    func uploadAndItsRequestsShareTheBudget() async throws {
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: 0.05)
        try await Self.withStore(policy) { base, store, alice, zone, clock, _ in
            // assets/upload answers; the bytes' connection is reset; the request for a new URL is refused, again
            // and again.
            try await Self.setFaults(
                base, "reset=45%,unavailable=45%",
                startingWith: [nil, .reset, .unavailable, .unavailable, .unavailable, .unavailable])
            let (outcomes, waits) = await Self.save(Self.photo(in: zone), store, as: alice)
            try await FaultyNetworkApplyTests.setConditions(base, "{}")
            #expect(throws: ShareError.self) { _ = try outcomes.get() }
            // Two waits in all (three attempts), not two for the upload and two more for the new URL's request.
            #expect(waits.map(\.reason) == [.connectionLost, .unavailable], "\(waits)")
            #expect(waits.map(\.attempt) == [2, 3], "\(waits)")
            #expect(clock.secondsMoved <= policy.totalWait)
            let stored = try await store.lookupRecords(["p1"], in: zone, database: .private, as: alice)
            #expect(stored.first?.savedRecord == nil)
        }
    }

    @Test("a save sent again after a refusal carries the receipt of its asset's one upload, within one budget")
    func assetsAreUploadedOnce() async throws {
        let policy = RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: 0.05)
        try await Self.withStore(policy) { base, store, alice, zone, clock, lines in
            let before = lines.all.count
            // assets/upload and the bytes go through; records/modify is refused, then answered.
            try await Self.setFaults(
                base, "unavailable=50%", startingWith: [nil, nil, .unavailable, nil])
            let (outcomes, waits) = await Self.save(Self.photo(in: zone), store, as: alice)
            try await FaultyNetworkApplyTests.setConditions(base, "{}")
            let saved = try outcomes.get()
            #expect(saved.first?.savedRecord != nil, "\(saved)")
            #expect(waits.map(\.reason) == [.unavailable], "\(waits)")
            #expect(clock.secondsMoved <= policy.totalWait)
            let requests = lines.all.dropFirst(before).compactMap { line in
                line.firstMatch(of: /POST (\/[^ ?"]+)/).map { String($0.1) }
            }
            #expect(requests.filter { $0.hasSuffix("/assets/upload") && $0.hasPrefix("/database/") }.count == 1)
            #expect(requests.filter { $0 == "/assets/upload" }.count == 1, "\(requests)")
            #expect(requests.filter { $0.hasSuffix("/records/modify") }.count == 2, "\(requests)")
            // The bytes are the file's.
            let stored = try await store.lookupRecords(["p1"], in: zone, database: .private, as: alice)
            guard case .assetID(let text)? = stored.first?.savedRecord?.fields["image"],
                let asset = AssetValue(text: text)
            else {
                Issue.record("no asset saved: \(stored)")
                return
            }
            #expect(try await store.downloadAsset(asset) == [UInt8](Self.picture))
        }
    }
}
