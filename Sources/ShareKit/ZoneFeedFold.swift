/// A zone's change feed folded page by page into the zone as it stands: the one folder of every reader of a
/// zone's feed (`wholeZone`, the zone tags a feed gives, the planner's partial reads), so that they agree on
/// what a page means. Later pages replace what earlier ones gave, a deletion removes a record or a share, and
/// a record or share keeps the place the feed first gave it. A record of the share type is read as its
/// `Share` (`changedShares`), never as a record.
public struct ZoneFeedFold: Sendable {
    /// The records by name.
    public private(set) var records: [String: Record] = [:]
    /// The shares by record name.
    public private(set) var shares: [String: Share] = [:]
    /// Names the feed deleted and did not give again since.
    public private(set) var deleted: Set<String> = []
    /// Names of the shares the feed gave or changed, the share-type records among its records included.
    public private(set) var changedShareNames: Set<String> = []
    private var recordOrder: [String] = []
    private var shareOrder: [String] = []
    private var seenRecords = Set<String>()
    private var seenShares = Set<String>()

    public init() {}

    /// Folds in the next page.
    public mutating func add(_ page: ZoneChanges) {
        for record in page.changedRecords {
            if record.recordType == shareRecordType {
                changedShareNames.insert(record.recordName)
                continue
            }
            records[record.recordName] = record
            deleted.remove(record.recordName)
            if seenRecords.insert(record.recordName).inserted { recordOrder.append(record.recordName) }
        }
        for share in page.changedShares {
            shares[share.recordName] = share
            deleted.remove(share.recordName)
            changedShareNames.insert(share.recordName)
            if seenShares.insert(share.recordName).inserted { shareOrder.append(share.recordName) }
        }
        for name in page.deletedRecordNames {
            records[name] = nil
            shares[name] = nil
            deleted.insert(name)
        }
    }

    /// The records, in the order the feed first gave them.
    public var orderedRecords: [Record] { recordOrder.compactMap { records[$0] } }
    /// The names of the records, in the order the feed first gave them.
    public var orderedRecordNames: [String] { recordOrder.filter { records[$0] != nil } }
    /// The shares, in the order the feed first gave them.
    public var orderedShares: [Share] { shareOrder.compactMap { shares[$0] } }
}
