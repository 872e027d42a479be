import CloudKitWire
import Foundation
import ShareKit
import ShareStoreSQLite
import Testing

/// CloudKit's size limits hold in every store: the SQLite store, and `sharelane serve` over the wire, refuse
/// what CloudKit refuses, with its error code, and change nothing.
@Suite(.serialized) struct LimitTests {
    typealias H = EmulatorHarness

    static let tenMegabytes = String(repeating: "x", count: 10 << 20)

    /// Writes a 10 MB record and a 100 kB email address through `store`; both must be refused and leave
    /// the zone as it was.
    static func refuseOversized(_ store: any Store) async throws {
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let zone = ZoneID(zoneName: "Lists")
        _ = try await store.modifyZones([ZoneOperation(.create, zone)], in: .private, as: alice)
        let small = Record(recordName: "n", recordType: "Note", zoneID: zone, fields: ["title": .string("small")])
        _ = try await store.modifyRecords(
            [.init(.create, small)], in: zone, database: .private, atomic: false, as: alice)
        let before = try await store.zoneChanges(zone, in: .private, since: nil, resultsLimit: nil, as: alice)

        let big = Record(recordName: "big", recordType: "Note", zoneID: zone, fields: ["body": .string(tenMegabytes)])
        let grown = Record(recordName: "n", recordType: "Note", zoneID: zone, fields: ["body": .string(tenMegabytes)])
        let outcomes = try await store.modifyRecords(
            [.init(.create, big), .init(.forceUpdate, grown)], in: zone, database: .private, atomic: false, as: alice)
        #expect(outcomes.map(\.error?.code) == [.badRequest, .badRequest])
        #expect(outcomes.first?.error?.reason.contains("over CloudKit's limit of 1 MB a record") == true)
        let after = try await store.zoneChanges(zone, in: .private, since: nil, resultsLimit: nil, as: alice)
        #expect(after.changedRecords == before.changedRecords)

        let longEmail = String(repeating: "a", count: 100_000) + "@example.com"
        await #expect {
            _ = try await store.signIn(email: longEmail, name: nil)
        } throws: { error in
            (error as? ShareError)?.code == .badRequest
        }
    }

    @Test("the SQLite store refuses a record over 1 MB and a 100 kB email address, changing nothing")
    func sqliteRefusesOversized() async throws {
        try await Self.refuseOversized(try SQLiteStore.inMemory())
    }

    @Test("sharelane serve refuses a record over 1 MB and a 100 kB email address with BAD_REQUEST, changing nothing")
    func emulatorRefusesOversized() async throws {
        try await H.withEmulator(maxBodyBytes: 64 << 20) { base in
            try await Self.refuseOversized(H.store(base))
        }
    }
}
