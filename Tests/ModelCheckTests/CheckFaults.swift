import Applier
import AsyncHTTPClient
import CloudKitWire
import Foundation
import NIOCore
import Planner
import ShareKit
import SharelaneTestSupport

/// The bad network the checker's `sharelane serve` plays while the serve side plans and applies
/// (Docs/ModelCheck.md, "Faults"): a seeded mix of unavailability, resets, lost answers and throttling, set
/// through `POST /_sharelane/faults` before each apply and cleared after it. Direct operations, views and the
/// checks' own plans run on a good network: their oracle is the access rules, and a forced delete whose answer
/// was lost cannot tell "deleted now" from "was never there" (the record is gone either way).
struct CheckFaults: Sendable {
    let serveURL: String
    let apiToken: String
    /// `unavailable=3%,reset=2%,lost-answer=3%`, as `serve --faults` writes it.
    let faults: String
    /// `25/s`, as `serve --throttle` writes it; nil for none.
    let throttle: String?

    /// The mix a run uses unless `SHARELANE_CHECK_FAULTS` says otherwise (`none` turns faults off).
    static let defaultFaults = "unavailable=3%,reset=2%,lost-answer=3%"
    static let defaultThrottle = "10/s"

    /// The faults of a run from the environment: nil when turned off.
    static func from(environment: [String: String], serveURL: String, apiToken: String) -> CheckFaults? {
        let faults = environment["SHARELANE_CHECK_FAULTS"] ?? defaultFaults
        guard faults != "none" else { return nil }
        let throttle = environment["SHARELANE_CHECK_THROTTLE"] ?? defaultThrottle
        return CheckFaults(
            serveURL: serveURL, apiToken: apiToken, faults: faults, throttle: throttle == "none" ? nil : throttle)
    }

    /// Puts the mix in force, its draws from `seed`.
    func on(seed: UInt64) async throws {
        var settings = #""faults": "\#(faults)", "seed": \#(seed)"#
        if let throttle { settings += #", "throttle": "\#(throttle)""# }
        try await post("{\(settings)}")
    }

    /// A good network again.
    func off() async throws {
        try await post("{}")
    }

    private func post(_ json: String) async throws {
        var request = HTTPClientRequest(
            url: serveURL + "/_sharelane/faults?ckAPIToken="
                + (apiToken.addingPercentEncoding(
                    withAllowedCharacters: .alphanumerics) ?? apiToken))
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: json))
        let response = try await WebServicesStore.failFastClient.execute(
            request, timeout: .seconds(TestDeadlines.httpRead.components.seconds))
        _ = try await response.body.collect(upTo: 1 << 16)
        guard response.status.code == 200 else {
            throw ShareError(.internalError, "POST /_sharelane/faults answered \(response.status.code)")
        }
    }

    /// Whether a failed apply stopped cleanly: every failure is a change never attempted or a request the
    /// store kept refusing to take for now (`TRY_AGAIN_LATER`, `THROTTLED`), never a store's answer to a
    /// write made twice (`EXISTS`, `CONFLICT`, `NOT_FOUND`).
    static func stoppedCleanly(_ report: ApplyReport) -> [String] {
        report.failures.filter { failure in
            failure.reason != ApplyReport.notAttemptedReason
                && ![ServerErrorCode.tryAgainLater, .throttled].contains { failure.reason.contains($0.rawValue) }
        }.map(\.description)
    }
}

/// What the faults did in a run: applies that met one, waits by reason, applies that stopped and were made
/// again.
final class FaultTally: @unchecked Sendable {
    private let lock = NSLock()
    private var waits: [StoreRetry.Reason: Int] = [:]
    private var stops = 0
    private var reapplies = 0
    private var faultedApplies = 0

    func wait(_ retry: StoreRetry) { lock.withLock { waits[retry.reason, default: 0] += 1 } }
    func stopped() { lock.withLock { stops += 1 } }
    func reapplied() { lock.withLock { reapplies += 1 } }
    func applied() { lock.withLock { faultedApplies += 1 } }

    var line: String {
        lock.withLock {
            let byReason = [StoreRetry.Reason.throttled, .unavailable, .connectionLost].map {
                "\(waits[$0, default: 0]) \($0.rawValue)"
            }
            return "faults: \(faultedApplies) applies over a bad network, retries \(byReason.joined(separator: ", ")); "
                + "\(stops) stopped cleanly (an apply, or its plan, out of retries), each converging when made "
                + "again (\(reapplies) re-applies)"
        }
    }

    var retries: Int { lock.withLock { waits.values.reduce(0, +) } }
}
