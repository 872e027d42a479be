import Foundation
import GRDB
import ShareKit

/// Turns the record changes of one `modifyRecords` call into notifications for the subscriptions they match,
/// in the same transaction as the writes, whoever wrote them (the owner, or a participant writing into the
/// owner's shared zone).
///
/// Who hears of a change in a zone: in the public database, every user's public query subscriptions; in a
/// private zone, its owner's private-database subscriptions, and each participant who may read the record
/// through an accepted share, with their shared-database subscriptions. A query subscription matches the
/// record's type, `firesOn` and filters (as `records/query` evaluates them) and gives one notification per
/// record; a zone or database subscription gives one notification per call. `firesOnce` removes the
/// subscription once it has fired.
///
/// A change to a zone as a whole (`fireZoneChange`: the zone deleted, a share saved or deleted, accepted or
/// left) is a change of the zone and of the databases that show it: the owner's database and zone
/// subscriptions on it fire, and so do the shared-database subscriptions of the participants whose shared
/// database it changes (those who had accepted, or accept now), once each.
///
/// Notifications are kept only for delivery (`NotificationQueue`).
enum SubscriptionFiring {
    /// A record's state before the call, for deciding create or update and for matching deletes; nil when
    /// no user has a subscription (the common case costs one `EXISTS`).
    static func snapshot(_ operations: [RecordOperation], context: ZoneContext, db: Database) throws
        -> [String: RecordRow]?
    {
        guard try anySubscription(db) else { return nil }
        let names = operations.compactMap { op -> String? in
            if case .record = op.item { return op.recordName }
            return nil
        }
        var rows: [String: RecordRow] = [:]
        for row in try RecordRow.fetchAll(db, zoneId: context.zoneId, names: names) { rows[row.name] = row }
        return rows
    }

    /// Whether any user holds a subscription.
    static func anySubscription(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM subscription)")) == true
    }

    private struct Change {
        var record: Record
        var shareRoot: String?
        var trigger: Subscription.Trigger
    }

    /// Records notifications for the outcomes' changes.
    static func fire(
        _ outcomes: [RecordOutcome], before: [String: RecordRow], context: ZoneContext, by writer: UserRecordName,
        db: Database
    ) throws {
        let savedNames = outcomes.compactMap { outcome -> String? in
            if case .saved(let record) = outcome { return record.recordName }
            return nil
        }
        var after: [String: RecordRow] = [:]
        for row in try RecordRow.fetchAll(db, zoneId: context.zoneId, names: savedNames) { after[row.name] = row }
        var changes: [Change] = []
        // The participants whose shared database a saved or deleted share changes: accepted before or after.
        var shareChanged = false
        var shareAudience = Set<UserRecordName>()
        func sharedWith(_ share: Share?) {
            for entry in share?.participants ?? [] where entry.acceptance == .accepted {
                shareAudience.insert(entry.userRecordName)
            }
        }
        for outcome in outcomes {
            switch outcome {
            case .savedShare(let share):
                shareChanged = true
                sharedWith(context.sharesByName[share.recordName])
                sharedWith(share)
            case .deleted(let name) where context.sharesByName[name] != nil:
                shareChanged = true
                sharedWith(context.sharesByName[name])
            case .saved(let record):
                guard let row = after[record.recordName] else { continue }
                changes.append(
                    Change(
                        record: try row.record(in: context.visibleZoneID, shareRecordName: nil),
                        shareRoot: row.shareRoot, trigger: before[record.recordName] == nil ? .create : .update))
            case .deleted(let name):
                guard let row = before[name] else { continue }
                changes.append(
                    Change(
                        record: try row.record(in: context.visibleZoneID, shareRecordName: nil),
                        shareRoot: row.shareRoot, trigger: .delete))
            case .failed:
                continue
            }
        }
        guard !changes.isEmpty || shareChanged else { return }
        let zoneName = context.zone.name
        let owner = context.owner
        shareAudience.remove(owner)
        // (recipient, database, the zone as the recipient names it, the changes the recipient may read)
        var audiences: [(UserRecordName, DatabaseScope, ZoneID, [Change])] = []
        switch context.zone.scope {
        case .public:
            let users = try String.fetchAll(
                db, sql: "SELECT DISTINCT user FROM subscription WHERE scope = ? ORDER BY user",
                arguments: [DatabaseScope.public])
            for user in users { audiences.append((user, .public, ZoneID(zoneName: zoneName), changes)) }
        case .private, .shared:
            audiences.append((owner, .private, ZoneID(zoneName: zoneName), changes))
            var participants = Set<UserRecordName>()
            for share in context.sharesByName.values {
                for entry in share.participants where entry.userRecordName != owner {
                    participants.insert(entry.userRecordName)
                }
            }
            participants.formUnion(shareAudience)
            for participant in participants.sorted() {
                // A record a participant could read before the call or can read after it changed what they see.
                let visible = changes.filter { change in
                    let roots = [change.shareRoot] + (before[change.record.recordName].map { [$0.shareRoot] } ?? [])
                    return roots.contains { root in
                        AccessRules.access(
                            caller: participant, zoneOwner: owner, share: context.coveringShare(shareRoot: root)
                        ).canRead
                    }
                }
                if !visible.isEmpty || shareAudience.contains(participant) {
                    audiences.append(
                        (participant, .shared, ZoneID(zoneName: zoneName, ownerRecordName: owner), visible))
                }
            }
        }
        try notify(audiences, by: writer, db: db)
    }

    /// Fires what a change to the zone as a whole fires: the owner's database and zone subscriptions on it,
    /// and the shared-database subscriptions of `participants`.
    static func fireZoneChange(
        zone zoneName: String, owner: UserRecordName, participants: Set<UserRecordName>,
        by writer: UserRecordName, db: Database
    ) throws {
        guard try anySubscription(db) else { return }
        var audiences: [(UserRecordName, DatabaseScope, ZoneID, [Change])] = [
            (owner, .private, ZoneID(zoneName: zoneName), [])
        ]
        for participant in participants.subtracting([owner]).sorted() {
            audiences.append((participant, .shared, ZoneID(zoneName: zoneName, ownerRecordName: owner), []))
        }
        try notify(audiences, by: writer, db: db)
    }

    /// Records each audience's notifications: database and zone subscriptions once, query subscriptions once
    /// per matching change.
    private static func notify(
        _ audiences: [(UserRecordName, DatabaseScope, ZoneID, [Change])], by writer: UserRecordName, db: Database
    ) throws {
        let batchID = UUID().uuidString.lowercased()
        var changeIDs: [String: String] = [:]
        for (recipient, database, zoneID, visible) in audiences {
            for subscription in try SubscriptionRow.all(of: recipient, in: database, db: db) {
                var fired = false
                switch subscription.kind {
                case .database, .zone:
                    if subscription.kind == .zone,
                        subscription.zoneID.map({ same($0, zoneID, recipient: recipient) }) != true
                    {
                        continue
                    }
                    try insert(
                        notification(
                            batchID, recipient, database, zoneID, subscription, record: nil, reason: nil, by: writer),
                        db: db)
                    fired = true
                case .query:
                    for change in visible where matches(subscription, change, zoneID: zoneID, recipient: recipient) {
                        let id = changeIDs[change.record.recordName] ?? UUID().uuidString.lowercased()
                        changeIDs[change.record.recordName] = id
                        try insert(
                            notification(
                                id, recipient, database, zoneID, subscription, record: change.record.recordName,
                                reason: change.trigger, by: writer),
                            db: db)
                        fired = true
                    }
                }
                if fired, subscription.firesOnce {
                    try SubscriptionRow.delete(subscription.subscriptionID, of: recipient, in: database, db: db)
                }
            }
        }
    }

    private static func same(_ a: ZoneID, _ b: ZoneID, recipient: UserRecordName) -> Bool {
        a.resolvingOwner(to: recipient) == b.resolvingOwner(to: recipient)
    }

    private static func matches(
        _ subscription: Subscription, _ change: Change, zoneID: ZoneID, recipient: UserRecordName
    ) -> Bool {
        guard subscription.recordType == change.record.recordType, subscription.fires(on: change.trigger) else {
            return false
        }
        if !subscription.zoneWide {
            let watched = subscription.zoneID ?? ZoneID(zoneName: defaultZoneName)
            guard same(watched, zoneID, recipient: recipient) else { return false }
        }
        return subscription.filters.allSatisfy { QueryEvaluation.matches(change.record, $0) }
    }

    private static func notification(
        _ id: String, _ recipient: UserRecordName, _ database: DatabaseScope, _ zoneID: ZoneID,
        _ subscription: Subscription, record: String?, reason: Subscription.Trigger?, by writer: UserRecordName
    ) -> SubscriptionNotification {
        SubscriptionNotification(
            sequence: 0, notificationID: id, recipient: recipient, subscriptionID: subscription.subscriptionID,
            kind: subscription.kind, database: database, zoneID: zoneID, recordName: record, reason: reason,
            alertBody: subscription.alertBody, changedBy: writer)
    }

    private static func insert(_ notification: SubscriptionNotification, db: Database) throws {
        try NotificationQueue.enqueue(notification, db: db)
    }
}
