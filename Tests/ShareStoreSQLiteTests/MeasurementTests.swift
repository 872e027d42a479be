import Foundation
import Logging
import ShareKit
import ShareStoreSQLite
import Testing

/// Timings, run only with `SHARELANE_MEASURE=1` (see `Scripts/measure-store.sh`, which builds in release and
/// compares with the `sqlite3` command inserting the same rows).
@Suite struct MeasurementTests {
    static var enabled: Bool { ProcessInfo.processInfo.environment["SHARELANE_MEASURE"] == "1" }

    @Test(.enabled(if: MeasurementTests.enabled))
    func insertingAHundredThousandRecordsInBatchesOf200() async throws {
        let environment = ProcessInfo.processInfo.environment
        let count = Int(environment["SHARELANE_MEASURE_RECORDS"] ?? "") ?? 100_000
        let temp = try TemporaryStore()
        let path = environment["SHARELANE_MEASURE_FILE"] ?? temp.path
        try? FileManager.default.removeItem(atPath: path)
        let store = try SQLiteStore(path: path, logger: Logger(label: "measure"))
        let owner = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let zone = ZoneID(zoneName: "Bench")
        _ = try await store.modifyZones([.init(.create, zone)], in: .private, as: owner)
        var records: [Record] = []
        records.reserveCapacity(count)
        for i in 0..<count {
            var fields: [String: FieldValue] = [:]
            fields["title"] = .string("Item \(i)")
            fields["done"] = .int64(Int64(i % 2))
            fields["qty"] = .int64(Int64(i % 17))
            fields["note"] = .string("A short note about item number \(i).")
            let parent: String? = i % 10 == 0 ? nil : "r\(i - i % 10)"
            records.append(
                Record(recordName: "r\(i)", recordType: "Todo", zoneID: zone, fields: fields, parent: parent))
        }
        let clock = ContinuousClock()
        let start = clock.now
        for batch in stride(from: 0, to: count, by: 200) {
            let ops = records[batch..<min(batch + 200, count)].map { RecordOperation(.create, $0) }
            let outcomes = try await store.modifyRecords(ops, in: zone, database: .private, atomic: true, as: owner)
            #expect(outcomes.allSatisfy { $0.error == nil })
        }
        let insert = clock.now - start

        let lookupStart = clock.now
        let names = (0..<200).map { "r\($0 * (count / 200))" }
        let found = try await store.lookupRecords(names, in: zone, database: .private, as: owner)
        let lookup = clock.now - lookupStart
        #expect(found.allSatisfy { $0.error == nil })

        let pageStart = clock.now
        let page = try await store.zoneChanges(zone, in: .private, since: nil, resultsLimit: 200, as: owner)
        let firstPage = clock.now - pageStart
        #expect(page.changedRecords.count == 200 && page.moreComing)

        let allStart = clock.now
        var token: ChangeToken?
        var total = 0
        while true {
            let next = try await store.zoneChanges(zone, in: .private, since: token, resultsLimit: 200, as: owner)
            total += next.changedRecords.count
            token = next.token
            if !next.moreComing { break }
        }
        let allPages = clock.now - allStart
        #expect(total == count)
        print(
            """
            MEASURE insert \(count) records in batches of 200: \(insert)
            MEASURE lookup 200 records: \(lookup)
            MEASURE first page of zone changes (200): \(firstPage)
            MEASURE all \(count / 200) pages of zone changes: \(allPages)
            """)
    }
}
