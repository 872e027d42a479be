import Foundation
import PlanModel
import Synchronization
import ShareKit

// MARK: - Applying a plan of several owners

extension Applier {
    /// Applies each owner's part of a plan as that owner (`Plan.ownerParts`), all at once: the users the
    /// store does not have yet are signed in first, once, so that no two parts create one user; then every
    /// part writes its owner's zones beside the others, as one owner's zones are written beside each other.
    /// Progress counts the whole plan's changes; the report lists them part after part.
    func applyOwners(_ parts: [Plan], of plan: Plan, progress: (@Sendable (ApplyProgress) -> Void)?) async
        -> ApplyReport
    {
        var parts = parts
        var known: [String: UserRecordName] = [:]
        // Only a store that acts as any user creates users (on cloudkit: each owner is signed in already).
        let newUsers = store.capabilities.actsAsAnyUser ? Self.newUsers(of: plan) : []
        if !newUsers.isEmpty {
            let limit = Parallelism.calls(parallelism, for: store, localLimit: Self.localUsersInFlight)
            // Each owner readied for the calls of their zones written at once (and one for the schema).
            let calls = Dictionary(
                parts.map { part in
                    (part.owner.handle, max(1, min(parallelism, Set(part.changes.map(\.zoneName)).count + 1)))
                }, uniquingKeysWith: { a, _ in a })
            let signedIn = await ApplyRun.signIn(newUsers, store: store, usersInFlight: limit, calls: calls)
            if let failure = signedIn.failure {
                // Nothing was written: every change is left for the next apply, which signs them in again.
                var report = ApplyReport(stopped: failure)
                for change in plan.changes {
                    report.failures.append(
                        .init(
                            action: change.action, kind: change.kind, address: change.address,
                            reason: ApplyReport.notAttemptedReason))
                }
                return report
            }
            for index in parts.indices {
                parts[index].owner.fill(from: signedIn.recordNames)
                for user in parts[index].users.indices { parts[index].users[user].fill(from: signedIn.recordNames) }
            }
            for user in newUsers {
                if let email = user.email, let name = signedIn.recordNames[user.handle] {
                    known[EmailAddress.normalized(email)] = name
                }
            }
        }
        let counter = PartProgress(parts: parts.count, total: plan.changes.count, progress: progress)
        let knownNames = known
        let reports = await withTaskGroup(of: (Int, ApplyReport).self) { group in
            for (index, part) in parts.enumerated() {
                group.addTask {
                    let report: ApplyReport
                    do {
                        report = try await applyPart(part, progress: counter.reporter(for: index), known: knownNames)
                    } catch {
                        // Only a plan of another store throws, checked before.
                        report = ApplyReport(stopped: "\(error)")
                    }
                    return (index, report)
                }
            }
            var reports = [ApplyReport?](repeating: nil, count: parts.count)
            for await (index, report) in group { reports[index] = report }
            return reports.compactMap { $0 }
        }
        var report = ApplyReport()
        for part in reports {
            report.applied += part.applied
            report.failures += part.failures
            report.stopped = report.stopped ?? part.stopped
            report.writes.parts += part.writes.parts
        }
        return report
    }

    /// The plan's users the store does not have yet, each once.
    static func newUsers(of plan: Plan) -> [PlannedUser] {
        var seen = Set<String>()
        return ([plan.owner] + plan.users).filter { $0.isNew && seen.insert($0.handle).inserted }
    }
}

extension PlannedUser {
    /// Takes the record name signed in for this user's handle, if they had none.
    mutating func fill(from recordNames: [String: UserRecordName]) {
        if isNew, let name = recordNames[handle] { recordName = name }
    }
}

/// The progress of parts applied at once, as one apply's: each part's changes done added up.
final class PartProgress: Sendable {
    private let completed: Mutex<[Int]>
    private let total: Int
    private let progress: (@Sendable (ApplyProgress) -> Void)?

    init(parts: Int, total: Int, progress: (@Sendable (ApplyProgress) -> Void)?) {
        completed = Mutex(Array(repeating: 0, count: parts))
        self.total = total
        self.progress = progress
    }

    /// What the part at `index` reports through.
    func reporter(for index: Int) -> (@Sendable (ApplyProgress) -> Void)? {
        guard let progress else { return nil }
        return { [self] step in
            var step = step
            step.completed = completed.withLock { completed in
                completed[index] = step.completed
                return completed.reduce(0, +)
            }
            step.total = total
            progress(step)
        }
    }
}
