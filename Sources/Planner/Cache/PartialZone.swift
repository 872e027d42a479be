import Applier
import PlanModel
import Recipe
import ShareKit

/// The records of a zone that changed since a plan found the zone as declared: what a plan of an unchanged
/// recipe reads instead of the whole zone (Docs/Plans.md, "Incremental plans").
///
/// The zone's other records are still as that plan found them, matching the recipe, so only the changed
/// records can plan to changes. A zone is read whole instead (`read` returns nil) when what changed touches
/// more than those records: a share, a record the recipe does not declare (the count of undeclared records
/// is a note), a record declared `absent`, a share root, a `!share-url` value, or a changed record type
/// (each a note or an order the whole zone decides).
struct PartialZone: Sendable {
    var zoneName: String
    /// What the last plan kept of the zone.
    var known: PlanMemo.Zone
    /// The changed records the recipe declares, in the recipe's order.
    var declared: [DeclaredRecord]
    /// The changed records as they are now, by name, and their order in the feed.
    var live: [String: Record]
    var liveOrder: [String]
    /// Records deleted since.
    var deleted: Set<String>
    /// The zone's change token after this read.
    var token: ChangeToken
    var calls: Int

    /// The zone's live state as far as the plan needs it: the changed records and the shares kept.
    var liveZone: LiveZone {
        LiveZone(
            zoneID: ZoneID(zoneName: zoneName), records: live, recordOrder: liveOrder,
            shares: Dictionary(known.shares.map { ($0.recordName, $0) }, uniquingKeysWith: { a, _ in a }))
    }

    /// The change tags of the zone now: the kept ones, with the changed records' and without the deleted.
    var tags: ChangeTags {
        var tags = known.tags
        tags.update(changed: live.mapValues { $0.changeTag ?? "" }, deleted: deleted)
        return tags
    }

    /// The zone's changes since `known.token`, when only records the recipe declares changed; nil when the
    /// zone must be read whole.
    static func read(
        zoneName: String, known: PlanMemo.Zone, file: DeclaredRecordFile, reader: LiveStateReader
    ) async -> PartialZone? {
        guard let since = known.token, known.undeclared == 0 else { return nil }
        let shareNames = Set(known.shares.map(\.recordName))
        var fold = ZoneFeedFold()
        // A token the store refuses, or any other failure: the whole read says what is wrong. A change to a
        // share, or the deletion of one, stops the read there: the zone is read whole.
        guard
            let ending = try? await reader.store.followZoneChanges(
                ZoneID(zoneName: zoneName), in: .private, since: since, as: reader.owner,
                receive: { page in
                    fold.add(page)
                    return fold.changedShareNames.isEmpty && fold.deleted.isDisjoint(with: shareNames)
                        && shareNames.isDisjoint(with: fold.records.keys)
                }),
            !ending.stoppedEarly
        else { return nil }
        let (token, calls) = (ending.token, ending.calls)
        let (live, order, deleted) = (fold.records, fold.orderedRecordNames, fold.deleted)
        let names = Set(order).union(deleted)
        guard let declared = file.records(named: names) else { return nil }
        let declaredNames = Set(declared.map(\.name))
        guard order.allSatisfy(declaredNames.contains) else { return nil }
        for record in declared {
            if record.absent || record.share != nil { return nil }
            if let now = live[record.name], now.recordType != record.type { return nil }
            for value in record.fields.values {
                if case .shareURL = value { return nil }
            }
        }
        return PartialZone(
            zoneName: zoneName, known: known, declared: declared, live: live, liveOrder: order, deleted: deleted,
            token: token,
            calls: calls)
    }
}
