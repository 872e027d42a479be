import Applier
import PlanModel
import Recipe
import ShareKit

/// The subscription changes of a plan: the declared subscriptions against the live ones, read with one
/// `listSubscriptions` per user and database the recipe declares subscriptions in (never for others).
///
/// A declared subscription the store lacks is created, one that differs is updated; a live subscription the
/// recipe does not declare, in a user's database the recipe declares subscriptions in, is kept with a note,
/// or deleted under `--prune`. `destroy` deletes the declared ones that exist.
struct SubscriptionPlan {
    var saves: [PlannedChange] = []
    var deletes: [PlannedChange] = []
    var notes: [String] = []
    var waiting: [String] = []
    /// Declared `fires_once` subscriptions that exist as declared (`Plan.rearm`).
    var rearm: [PlannedSubscription] = []
    /// Store calls made.
    var calls = 0

    /// Reads the live subscriptions of each user and database `declared` names, and plans the changes.
    /// - Parameter actsAsAnyUser: whether the store reads as any user; otherwise only the owner's
    ///   subscriptions are planned, and the others are listed as waiting for their user.
    /// - Throws: `PlannerError.storeFailed` when the store cannot list a user's subscriptions.
    static func make(
        _ declared: [DeclaredSubscription], users: UserDirectory, store: any Store, actsAsAnyUser: Bool,
        prune: Bool, destroy: Bool
    ) async throws -> SubscriptionPlan {
        var plan = SubscriptionPlan()
        var groups: [(handle: String, database: DatabaseScope, declared: [DeclaredSubscription])] = []
        // Declared creations, updates and deletions in the recipe's order, whichever user they are of.
        var position: [String: Int] = [:]
        for (index, subscription) in declared.enumerated() { position[subscription.path] = index }
        // Groups by "handle database": a scan of the groups for each subscription made thousands of users'
        // subscriptions quadratic.
        var groupOf: [String: Int] = [:]
        for subscription in declared {
            let key = (subscription.handle, subscription.subscribe.database)
            let name = key.0 + " " + key.1.rawValue
            if let index = groupOf[name] {
                groups[index].declared.append(subscription)
            } else {
                groupOf[name] = groups.count
                groups.append((key.0, key.1, [subscription]))
            }
        }
        // A plan from the cache file signed in the owner alone: the users whose subscriptions are listed are
        // signed in again where this process cannot act as them yet, all in one call.
        let listed = groups.compactMap { group -> KnownUserSignIn.Known? in
            guard actsAsAnyUser || group.handle == users.ownerHandle, let entry = users.entry(handle: group.handle),
                let recordName = entry.recordName
            else { return nil }
            return KnownUserSignIn.Known(handle: group.handle, email: entry.email, recordName: recordName)
        }
        if let failure = await KnownUserSignIn.ready(listed, store: store) {
            throw PlannerError.storeFailed(
                operation: "signing in the users whose subscriptions are listed", subject: store.displayName,
                ShareError(.authenticationRequired, failure))
        }
        for group in groups {
            let entry = users.entry(handle: group.handle)
            if !actsAsAnyUser && group.handle != users.ownerHandle {
                for subscription in group.declared {
                    plan.waiting.append(
                        "subscription \(subscription.path): waiting for \(group.handle) to subscribe (\(store.displayName) "
                            + "acts only as its signed-in user)")
                }
                continue
            }
            var live: [Subscription] = []
            if let entry, let recordName = entry.recordName {
                do {
                    live = try await store.listSubscriptions(in: group.database, as: recordName)
                    plan.calls += 1
                } catch let error as ShareError {
                    throw PlannerError.storeFailed(
                        operation: "listing the \(group.database.rawValue) database's subscriptions of \(group.handle)",
                        subject: store.displayName, error)
                }
            }
            let liveByID = Dictionary(
                live.map { (normalized($0, user: entry?.recordName), $0) }.map { ($0.0.subscriptionID, $0.0) },
                uniquingKeysWith: { first, _ in first })
            for subscription in group.declared {
                let wanted = planned(subscription)
                let address = "subscription \(subscription.path)"
                let existing = liveByID[wanted.subscriptionID]
                if destroy {
                    if let existing {
                        plan.deletes.append(change(.delete, address, group.handle, group.database, existing))
                    }
                    continue
                }
                guard let existing else {
                    plan.saves.append(change(.create, address, group.handle, group.database, wanted))
                    continue
                }
                let differences = attributes(of: existing, against: wanted)
                if differences.isEmpty, wanted.firesOnce {
                    plan.rearm.append(
                        PlannedSubscription(handle: group.handle, database: group.database, subscription: wanted))
                }
                if !differences.isEmpty {
                    var update = change(.update, address, group.handle, group.database, wanted)
                    update.attributes = differences
                    plan.saves.append(update)
                }
            }
            let declaredIDs = Set(group.declared.map(\.subscribe.subscriptionID))
            let undeclared = live.map { normalized($0, user: entry?.recordName) }.filter {
                !declaredIDs.contains($0.subscriptionID)
            }
            guard !undeclared.isEmpty, !destroy else { continue }
            if prune {
                for subscription in undeclared.sorted(by: { $0.subscriptionID < $1.subscriptionID }) {
                    plan.deletes.append(
                        change(
                            .delete,
                            "subscription \(group.handle)/\(group.database.rawValue)/\(subscription.subscriptionID)",
                            group.handle, group.database, subscription))
                }
            } else {
                let count = undeclared.count
                plan.notes.append(
                    "\(count) undeclared subscription\(count == 1 ? "" : "s") of \(group.handle) kept in the "
                        + "\(group.database.rawValue) database; --prune deletes \(count == 1 ? "it" : "them").")
            }
        }
        let order = { (change: PlannedChange) in
            change.subscription.flatMap { position[$0.path] } ?? declared.count
        }
        plan.saves.sort { order($0) < order($1) }
        // Declared deletions (`destroy`) in the recipe's order; pruned ones after them, as they were found.
        let deletes = plan.deletes.enumerated().sorted {
            (order($0.element), $0.offset) < (order($1.element), $1.offset)
        }
        plan.deletes = deletes.map(\.element)
        return plan
    }

    /// The subscription a declaration asks for.
    static func planned(_ declared: DeclaredSubscription) -> Subscription {
        let step = declared.subscribe
        return Subscription(
            subscriptionID: step.subscriptionID, kind: step.kind,
            recordType: step.kind == .query ? step.recordType : nil,
            zoneID: step.zone.flatMap { step.kind == .query && $0 == defaultZoneName ? nil : ZoneID(zoneName: $0) },
            firesOn: step.kind == .query ? step.firesOn : [],
            firesOnce: step.kind == .query && step.firesOnce, alertBody: step.alertBody)
    }

    /// A live subscription with its zone's owner written as the default owner when it is the user
    /// (`__defaultOwner__` or their record name), as the recipe names zones; the fires-on changes of a
    /// zone or database subscription (which fire on every change) dropped.
    static func normalized(_ live: Subscription, user: UserRecordName?) -> Subscription {
        var subscription = live
        if let zoneID = live.zoneID, zoneID.ownerRecordName == user {
            subscription.zoneID = ZoneID(zoneName: zoneID.zoneName)
        }
        if live.kind != .query { subscription.firesOn = [] }
        // A query subscription without a zone watches the default zone: the two are one.
        if live.kind == .query, subscription.zoneID == ZoneID.defaultZone { subscription.zoneID = nil }
        return subscription
    }

    /// What differs between the live subscription and the wanted one, attribute by attribute.
    static func attributes(of live: Subscription, against wanted: Subscription) -> [AttributeChange] {
        let before = words(live)
        let after = words(wanted)
        var changes: [AttributeChange] = []
        for name in ["type", "record_type", "zone", "zone_wide", "filter", "fires_on", "fires_once", "alert"]
        where before[name] != after[name] {
            changes.append(
                AttributeChange(
                    name: name, isField: false, before: before[name].map { .text($0) },
                    after: after[name].map { .text($0) }))
        }
        return changes
    }

    /// A subscription's attributes as a recipe writes them; absent ones are left out.
    static func words(_ subscription: Subscription) -> [String: String] {
        var words = ["type": subscription.kind.rawValue]
        if let recordType = subscription.recordType { words["record_type"] = recordType }
        if let zoneID = subscription.zoneID { words["zone"] = zoneID.description }
        if subscription.zoneWide { words["zone_wide"] = "true" }
        if !subscription.filters.isEmpty { words["filter"] = "\(subscription.filters.count) filter(s)" }
        if subscription.kind == .query {
            words["fires_on"] = "[" + subscription.firesOn.map(\.rawValue).joined(separator: ", ") + "]"
        }
        if subscription.firesOnce && subscription.kind == .query { words["fires_once"] = "true" }
        if let alert = subscription.alertBody { words["alert"] = alert }
        return words
    }

    /// A change of a subscription; a create lists every attribute, a delete every attribute it had.
    static func change(
        _ action: PlannedChange.Action, _ address: String, _ handle: String, _ database: DatabaseScope,
        _ subscription: Subscription
    ) -> PlannedChange {
        let words = words(subscription)
        let attributes = ["type", "record_type", "zone", "zone_wide", "filter", "fires_on", "fires_once", "alert"]
            .compactMap { name in
                words[name].map {
                    AttributeChange(
                        name: name, isField: false, before: action == .delete ? .text($0) : nil,
                        after: action == .delete ? nil : .text($0))
                }
            }
        return PlannedChange(
            action: action, kind: .subscription, address: address, database: database,
            zoneName: subscription.zoneID?.zoneName ?? "", attributes: attributes,
            subscription: PlannedSubscription(handle: handle, database: database, subscription: subscription))
    }
}
