import Applier
import Foundation
import SharelaneTestSupport
import Planner
import ShareKit
import ShareStoreSQLite
import Testing

/// The checker's own checks must be able to fail: two stores given the same apply have equal views, and a
/// write behind one store's back shows up in the comparison, naming the record.
@Suite struct StoreViewTests {
    @Test func aWriteToOneStoreAloneMakesTheViewsDiffer() async throws {
        let scratch = try TemporaryDirectory("modelcheck-view")
        let directory = scratch.url
        let spec = CheckCase.generate(seed: 3, bugs: .gated).recipe
        let recipe = try CaseRunner.load(spec.yaml())
        var stores: [SQLiteStore] = []
        for name in ["a", "b"] {
            let store = try SQLiteStore(
                path: directory.appendingPathComponent("\(name).sqlite").path, logger: CaseRunner.logger)
            let users = try await UserDirectory.signIn(recipe, store: store, logger: CaseRunner.logger)
            let plan = try await Planner(store: store, logger: CaseRunner.logger).plan(recipe, users: users)
            let report = try await Applier(store: store, logger: CaseRunner.logger).apply(plan)
            #expect(report.succeeded)
            stores.append(store)
        }
        let users = spec.users.map { ($0, CaseRun.recordName($0)) }
        let before = [await StoreView.read(stores[0], users: users), await StoreView.read(stores[1], users: users)]
        #expect(before[0] == before[1])
        #expect(before[0].lines.contains { $0.hasPrefix("    record ") })

        let zone = try #require(spec.zones.first?.name)
        let record = try #require(spec.records(in: zone).first?.record)
        let owner = CaseRun.recordName(spec.owner(ofZone: zone))
        _ = try await stores[1].modifyRecords(
            [
                RecordOperation(
                    .forceUpdate,
                    Record(
                        recordName: record.name, recordType: record.type, zoneID: ZoneID(zoneName: zone),
                        fields: ["behind": .int64(1)]))
            ], in: ZoneID(zoneName: zone), database: .private, atomic: true, as: owner)
        let after = await StoreView.read(stores[1], users: users)
        #expect(after != before[0])
        #expect(CaseRun.diff(before[0], after).contains("record \(record.name) "))
    }
}
