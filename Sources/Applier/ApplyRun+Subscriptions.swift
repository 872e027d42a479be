import PlanModel
import ShareKit

// MARK: - Subscriptions

extension ApplyRun {
    /// Creates, updates and deletes the plan's subscriptions, as each user, one `subscriptions/modify` per
    /// user and database (in batches of CloudKit's limit); after the zones they watch exist and before any
    /// zone is deleted. A subscription watching a zone whose creation failed is not attempted.
    mutating func applySubscriptions() async {
        var groups: [(handle: String, database: DatabaseScope, indices: [Int])] = []
        var positions: [GroupKey: Int] = [:]
        for index in indices(.subscription, .delete, not: true) + indices(.subscription, .delete) {
            guard let planned = plan.changes[index].subscription else {
                fail([index], "the plan carries no subscription for this change")
                continue
            }
            let key = GroupKey(handle: planned.handle, database: planned.database)
            if let position = positions[key] {
                groups[position].indices.append(index)
            } else {
                positions[key] = groups.count
                groups.append((planned.handle, planned.database, [index]))
            }
        }
        let users = plannedUsersByHandle()
        for group in groups {
            guard !halted else { return }
            guard let user = users[group.handle], !user.isNew
            else {
                fail(group.indices, "\(group.handle) has no account in \(store.displayName) yet")
                continue
            }
            var ready: [Int] = []
            for index in group.indices {
                let zoneName = plan.changes[index].zoneName
                if plan.changes[index].action != .delete, !zoneName.isEmpty, failedZones.contains(zoneName) {
                    fail([index], "zone \(zoneName) was not created")
                } else {
                    ready.append(index)
                }
            }
            var start = ready.startIndex
            while start < ready.endIndex, !halted {
                let batch = Array(ready[start..<min(start + Applier.batchSize, ready.endIndex)])
                start += batch.count
                let operations = batch.map { index -> SubscriptionOperation in
                    let subscription = plan.changes[index].subscription?.subscription ?? .database("")
                    switch plan.changes[index].action {
                    case .create: return SubscriptionOperation(.create, subscription)
                    case .update: return SubscriptionOperation(.update, subscription)
                    case .delete: return .delete(subscription.subscriptionID)
                    }
                }
                do {
                    let outcomes = try await store.modifySubscriptions(
                        operations, in: group.database, as: user.recordName)
                    for (index, outcome) in zip(batch, outcomes) {
                        if let error = outcome.error {
                            fail([index], error.description)
                        } else {
                            succeed([index])
                        }
                    }
                    if outcomes.count < batch.count {
                        fail(Array(batch[outcomes.count...]), "the store answered no outcome for it")
                    }
                } catch {
                    fail(batch, "\(error)")
                    stopped = "\(error)"
                }
                report(
                    "saved \(batch.count) subscription(s) of \(group.handle) in the \(group.database.rawValue) database"
                )
            }
        }
    }

    /// Saves again the plan's `rearm` subscriptions that this apply's record writes fired and so removed
    /// (`fires_once`): one `subscriptions/list` per user and database, then a create of each one gone. Only
    /// when the apply wrote records; a failure here leaves the subscription for the next plan to show.
    mutating func rearmSubscriptions() async {
        guard let rearm = plan.rearm, !rearm.isEmpty else { return }
        let wroteRecords = plan.changes.indices.contains { index in
            plan.changes[index].kind == .record && outcomes[index] == .applied
        }
        guard wroteRecords else { return }
        var groups: [(handle: String, database: DatabaseScope, subscriptions: [Subscription])] = []
        var positions: [GroupKey: Int] = [:]
        for planned in rearm {
            let key = GroupKey(handle: planned.handle, database: planned.database)
            if let position = positions[key] {
                groups[position].subscriptions.append(planned.subscription)
            } else {
                positions[key] = groups.count
                groups.append((planned.handle, planned.database, [planned.subscription]))
            }
        }
        let users = plannedUsersByHandle()
        for group in groups {
            guard let user = users[group.handle], !user.isNew
            else { continue }
            do {
                let live = Set(
                    try await store.listSubscriptions(in: group.database, as: user.recordName).map(\.subscriptionID))
                let gone = group.subscriptions.filter { !live.contains($0.subscriptionID) }
                guard !gone.isEmpty else { continue }
                let outcomes = try await store.modifySubscriptions(
                    gone.map { SubscriptionOperation(.create, $0) }, in: group.database, as: user.recordName)
                for (subscription, outcome) in zip(gone, outcomes) {
                    if let error = outcome.error {
                        logger.warning(
                            "could not save again \(group.handle)'s fires_once subscription \(subscription.subscriptionID): \(error)"
                        )
                    }
                }
                report(
                    "saved again \(gone.count) fires_once subscription(s) of \(group.handle) in the "
                        + "\(group.database.rawValue) database that this apply's writes fired")
            } catch {
                logger.warning("could not save again \(group.handle)'s fires_once subscriptions: \(error)")
            }
        }
    }

    /// A user and database: subscriptions go one `subscriptions/modify` a group.
    private struct GroupKey: Hashable {
        var handle: String
        var database: DatabaseScope
    }

    /// The plan's owner and users by handle (the owner's entry first): each subscription group asks for its
    /// user, and a scan of the users, or of the groups, for each made the subscriptions of thousands of users
    /// quadratic.
    func plannedUsersByHandle() -> [String: PlannedUser] {
        var users: [String: PlannedUser] = [plan.owner.handle: plan.owner]
        users.reserveCapacity(plan.users.count + 1)
        for user in plan.users where users[user.handle] == nil { users[user.handle] = user }
        return users
    }
}
