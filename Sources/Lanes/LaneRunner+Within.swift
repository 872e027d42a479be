import Foundation
import Recipe
import ShareKit

// `within:` on a step: its check tried again until it holds or its time is up.
extension LaneRunner {
    /// `within:`: tries `check` again, with backoff (0.1 s, doubling, at most 1 s apart), until it holds or
    /// `seconds` have passed, the last try at the end of that time; the last failure is the one reported, with
    /// how many tries it took over how long. CloudKit's query indexes lag behind its writes, so a query, or an
    /// expectation read through one, may hold only a moment later.
    func eventually(
        within seconds: Double, action: String, at location: SourceLocation, _ check: () async throws -> String?
    ) async throws -> String? {
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        var wait = Duration.milliseconds(100)
        var tries = 0
        while true {
            tries += 1
            let failure: any Error
            do {
                let found = try await check()
                return tries == 1 ? found : (found.map { "\($0); " } ?? "") + "held after \(tries) tries"
            } catch let error as LaneError {
                failure = error
            } catch let error as ShareError {
                failure = error
            }
            let now = ContinuousClock.now
            guard now < deadline else {
                let elapsed = now - start
                let took = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                let limit = seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(Int((seconds * 1000).rounded()))ms"
                throw Self.laneError(failure, action: action, at: location).retried(
                    "tried \(tries) time\(tries == 1 ? "" : "s") over \(String(format: "%.1f", took)) s (within: \(limit))"
                )
            }
            try await Task.sleep(for: min(wait, deadline - now))
            wait = min(.seconds(1), wait * 2)
        }
    }
}
