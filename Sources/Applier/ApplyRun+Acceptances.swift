import Foundation
import Logging
import PlanModel
import ShareKit

// MARK: - Acceptances

extension ApplyRun {
    /// The participant changes whose participant accepts the share in this run.
    func acceptances() -> [(index: Int, participant: PlannedParticipant, share: PlannedShare)] {
        var found: [(index: Int, participant: PlannedParticipant, share: PlannedShare)] = []
        for index in plan.changes.indices where plan.changes[index].kind == .participant {
            let change = plan.changes[index]
            guard change.action != .delete, let participant = change.participant.map(filled),
                participant.accept, let share = change.share
            else { continue }
            found.append((index, participant, share))
        }
        return found
    }

    /// After a run that stopped before its second writes: a participant whose share was saved but who did not
    /// accept it, and a record saved without the `!share-url` fields it waits for, are not applied (their
    /// first write marked them so) but not attempted, so that the report says so and nothing takes them for
    /// done.
    mutating func reopenHalfDone() {
        for (index, _, _) in acceptances() where !acceptancesAnswered.contains(index) && outcomes[index] == .applied {
            reopen(index)
        }
        // `resolveDeferredShareURLs` empties the list when it starts: these are the records it never wrote.
        for (index, _) in deferred where outcomes[index] == .applied { reopen(index) }
    }

    /// Accepts shares as their participants, all of one participant's shares in one call (one
    /// `records/accept` request, one transaction in the SQLite store).
    mutating func acceptShares() async {
        var users: [UserRecordName] = []
        var byUser: [UserRecordName: [(index: Int, url: String)]] = [:]
        for (index, participant, share) in acceptances() {
            if hasFailed(index) { continue }
            guard let url = shareURLs[share.path] else {
                fail([index], "share \(share.path) has no URL to accept, so \(participant.handle) could not accept it")
                continue
            }
            if byUser[participant.userRecordName] == nil { users.append(participant.userRecordName) }
            byUser[participant.userRecordName, default: []].append((index, url))
        }
        // Each user's shares in one request of at most `Applier.batchSize`; all users' requests in one call
        // where the store batches across users (one transaction), otherwise one request a call, a few at a time
        // (over `http:` each user's requests carry that user's own token).
        typealias Accepts = [(index: Int, url: String)]
        var requests: [(user: UserRecordName, accepts: Accepts)] = []
        for user in users {
            let accepts = byUser[user] ?? []
            for start in stride(from: 0, to: accepts.count, by: Applier.batchSize) {
                requests.append((user, Array(accepts[start..<min(start + Applier.batchSize, accepts.count)])))
            }
        }
        guard !requests.isEmpty else { return }
        let groups = store.capabilities.batchesInOneTransaction ? [requests] : requests.map { [$0] }
        let store = self.store
        // Calls answered so far: a share accepted in two calls (two users' requests over `http:`, under way
        // at once) was written last by whichever the store ran last, which the order of the answers does not
        // tell (`WrittenTags.tags(in:from:now:)` asks the store which).
        var answered = 0
        await BoundedTasks.run(groups, limit: usersInFlight, while: { !halted }) { group in
            await BoundedTasks.result {
                try await store.acceptShares(group.map { ShareAcceptances(user: $0.user, urls: $0.accepts.map(\.url)) })
            }
        } receive: { group, outcome in
            answered += 1
            for (number, request) in group.enumerated() {
                acceptancesAnswered.formUnion(request.accepts.map(\.index))
                switch outcome {
                case .failure(let error):
                    for (index, _) in request.accepts { fail([index], acceptFailure(index, "\(error)")) }
                    stopped = stopped ?? "\(error)"
                case .success(let answers):
                    let results = number < answers.count ? answers[number] : []
                    for (position, (index, _)) in request.accepts.enumerated() {
                        switch position < results.count ? results[position] : nil {
                        case .success(let metadata)?:
                            // Each acceptance writes the share again; the last one's tag is the share's now.
                            let zone = metadata.zoneID.zoneName
                            if cachedZones.contains(zone) {
                                written.accepted(
                                    metadata.share.recordName, tag: metadata.share.changeTag, zone: zone,
                                    by: request.user, call: answered)
                            }
                            succeed([index])
                        case .failure(let error)?: fail([index], acceptFailure(index, error.description))
                        case nil: fail([index], acceptFailure(index, "the store answered no result"))
                        }
                    }
                }
            }
            let accepted = group.reduce(0) { $0 + $1.accepts.count }
            if group.count == 1 {
                let handle = plan.changes[group[0].accepts[0].index].participant?.handle ?? group[0].user
                report("\(handle) accepted \(accepted) share(s)")
            } else {
                report("\(Set(group.map(\.user)).count) participants accepted \(accepted) share(s)")
            }
        }
    }

    private func acceptFailure(_ index: Int, _ reason: String) -> String {
        let change = plan.changes[index]
        return
            "accepting share \(change.share.map { "\($0.path)" } ?? "?") as \(change.participant?.handle ?? "?") failed: \(reason)"
    }
}
