import ShareKit
import Testing

/// A zone's change feed folded page by page (`ZoneFeedFold`), as `wholeZone`, the zone tags a feed gives and
/// the planner's partial reads all read it.
@Suite struct ZoneFeedFoldTests {
    let zone = ZoneID(zoneName: "Lists")

    func record(_ name: String, tag: String, type: String = "Todo") -> Record {
        Record(recordName: name, recordType: type, zoneID: zone, changeTag: tag)
    }

    func page(_ records: [Record] = [], shares: [Share] = [], deleted: [String] = [], token: String) -> ZoneChanges {
        ZoneChanges(
            zoneID: zone, changedRecords: records, changedShares: shares, deletedRecordNames: deleted,
            token: ChangeToken(rawValue: token), moreComing: true)
    }

    @Test("later pages replace earlier ones, deletions remove, a record given again keeps its first place once")
    func pagesFoldInOrder() {
        var fold = ZoneFeedFold()
        fold.add(page([record("a", tag: "1"), record("b", tag: "1")], token: "t1"))
        fold.add(page([record("c", tag: "1")], deleted: ["a"], token: "t2"))
        fold.add(page([record("a", tag: "2"), record("b", tag: "2")], token: "t3"))
        #expect(fold.orderedRecords.map(\.recordName) == ["a", "b", "c"])
        #expect(fold.orderedRecordNames == ["a", "b", "c"])
        #expect(fold.records["a"]?.changeTag == "2")
        #expect(fold.deleted.isEmpty)
        fold.add(page(deleted: ["b"], token: "t4"))
        #expect(fold.orderedRecordNames == ["a", "c"])
        #expect(fold.deleted == ["b"])
    }

    @Test("a share is a share, never a record: a share-type record among the records is noted as a changed share")
    func sharesAreNotRecords() {
        var fold = ZoneFeedFold()
        let share = Share.zoneWide(zone, title: "Lists")
        fold.add(
            page(
                [record("a", tag: "1"), record(zoneShareRecordName, tag: "1", type: shareRecordType)],
                shares: [share], token: "t1"))
        #expect(fold.orderedRecordNames == ["a"])
        #expect(fold.orderedShares.map(\.recordName) == [zoneShareRecordName])
        #expect(fold.changedShareNames == [zoneShareRecordName])
        fold.add(page(deleted: [zoneShareRecordName], token: "t2"))
        #expect(fold.orderedShares.isEmpty)
        #expect(fold.deleted == [zoneShareRecordName])
    }
}
