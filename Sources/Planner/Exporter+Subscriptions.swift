import PlanModel
import Recipe
import ShareKit

extension Exporter {
    /// The subscriptions of the users an export names, in each of their databases, as `subscriptions:`
    /// entries, and lines for the recipe's header saying what was left out: subscriptions a recipe cannot
    /// say (filters, `zoneWide`, a zone the export does not declare), and users whose subscriptions the
    /// store does not let it read (on `cloudkit:` only the signed-in user's).
    func exportedSubscriptions(users: ExportedUsers, owner: UserRecordName, zones: Set<String>) async
        -> ([DeclaredSubscription], [String])
    {
        var declared: [DeclaredSubscription] = []
        var notes: [String] = []
        var skipped = 0
        let location = SourceLocation(file: "exported", line: 1, column: 1)
        for entry in users.entries where store.capabilities.actsAsAnyUser || entry.recordName == owner {
            // Over http: a user other than the owner needs a session of their own to be read as.
            if entry.recordName != owner { _ = try? await store.signInExisting(email: entry.email) }
            for database in [DatabaseScope.private, .shared, .public] {
                let live: [Subscription]
                do {
                    live = try await store.listSubscriptions(in: database, as: entry.recordName)
                } catch {
                    notes.append(
                        "The \(database.rawValue) database's subscriptions of \(entry.handle) are not exported: "
                            + "the store cannot list them (\(error)).")
                    continue
                }
                for subscription in live.sorted(by: { $0.subscriptionID < $1.subscriptionID }) {
                    let zoneID = subscription.zoneID
                    let zoneIsOwn =
                        zoneID.map { $0.ownerRecordName == defaultOwnerName || $0.ownerRecordName == entry.recordName }
                        ?? true
                    let zoneName = zoneID?.zoneName
                    let sayable =
                        subscription.filters.isEmpty && !subscription.zoneWide && zoneIsOwn
                        && (zoneName == nil || zoneName == defaultZoneName
                            || (entry.recordName == owner && zones.contains(zoneName ?? "")))
                    guard sayable else {
                        skipped += 1
                        continue
                    }
                    let step = SubscribeStep(
                        subscriptionID: subscription.subscriptionID, database: database, kind: subscription.kind,
                        zone: zoneName, recordType: subscription.kind == .query ? subscription.recordType : nil,
                        firesOn: subscription.kind == .query ? subscription.firesOn : Subscription.Trigger.allCases,
                        firesOnce: subscription.firesOnce, alertBody: subscription.alertBody)
                    declared.append(DeclaredSubscription(handle: entry.handle, subscribe: step, location: location))
                }
            }
        }
        if skipped > 0 {
            notes.append(
                "\(skipped) subscription\(skipped == 1 ? " is" : "s are") not exported: a recipe cannot say "
                    + "filters, zone-wide queries, or a zone the export does not declare.")
        }
        return (declared, notes)
    }
}
