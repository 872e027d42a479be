import Foundation
import Logging
import ShareKit

// MARK: - Acceptances

extension ApplyRun {
    /// Accepts shares as their participants, all of one participant's shares in one call (one
    /// `records/accept` request, one transaction in the SQLite store).
    mutating func acceptShares() async {
        var users: [UserRecordName] = []
        var byUser: [UserRecordName: [(index: Int, url: String)]] = [:]
        for index in plan.changes.indices where plan.changes[index].kind == .participant {
            let change = plan.changes[index]
            guard change.action != .delete, let participant = change.participant.map(filled),
                participant.accept, let share = change.share
            else { continue }
            if hasFailed(index) { continue }
            guard let url = shareURLs[share.path] else {
                fail([index], "share \(share.path) has no URL to accept, so \(participant.handle) could not accept it")
                continue
            }
            if byUser[participant.userRecordName] == nil { users.append(participant.userRecordName) }
            byUser[participant.userRecordName, default: []].append((index, url))
        }
        // Each user's shares in one call; a few users at a time, as they are independent (over `http:` each
        // user's requests carry that user's own token).
        typealias Chunk = [(index: Int, url: String)]
        var chunks: [(UserRecordName, Chunk)] = []
        for user in users {
            let accepts = byUser[user] ?? []
            for start in stride(from: 0, to: accepts.count, by: Applier.batchSize) {
                chunks.append((user, Array(accepts[start..<min(start + Applier.batchSize, accepts.count)])))
            }
        }
        let store = self.store
        await BoundedTasks.run(chunks, limit: Applier.zonesInFlight, while: { stopped == nil }) { chunk in
            await BoundedTasks.result { try await store.acceptShares(urls: chunk.1.map(\.url), as: chunk.0) }
        } receive: { chunk, outcome in
            let (user, accepts) = chunk
            switch outcome {
            case .failure(let error):
                for (index, _) in accepts { fail([index], acceptFailure(index, "\(error)")) }
                stopped = stopped ?? "\(error)"
            case .success(let results):
                for (position, (index, _)) in accepts.enumerated() {
                    switch position < results.count ? results[position] : nil {
                    case .success?: succeed([index])
                    case .failure(let error)?: fail([index], acceptFailure(index, error.description))
                    case nil: fail([index], acceptFailure(index, "the store answered no result"))
                    }
                }
            }
            let handle = plan.changes[accepts[0].index].participant?.handle ?? user
            report("\(handle) accepted \(accepts.count) share(s)")
        }
    }

    private func acceptFailure(_ index: Int, _ reason: String) -> String {
        let change = plan.changes[index]
        return
            "accepting share \(change.share.map { "\($0.path)" } ?? "?") as \(change.participant?.handle ?? "?") failed: \(reason)"
    }
}
