import Foundation
import ShareKit
import ShareStoreSQLite
import Testing

/// The local files an `!asset` value names travel with the write that saves it: a store keeps no list of
/// them between writes, so one write's files never stand in for another's.
@Suite struct AssetFilesTests {
    /// An `ASSETID` text naming `name` with `bytes`' checksum, as a recipe's `!asset NAME` loads it.
    static func text(_ name: String, _ bytes: Data) -> String { "\(name)#" + FNV1a64.checksum(of: bytes) }

    @Test("two writes at once keep each its own file, and a write that names none is refused though another did")
    func eachWriteCarriesItsOwnFiles() async throws {
        let fixture = try TemporaryStore()
        let store = fixture.store
        let (apple, river) = (Data("apple\n".utf8), Data((0..<300).map { UInt8($0 % 251) }))
        let applePath = fixture.directory.appendingPathComponent("apple.txt").path
        let riverPath = fixture.directory.appendingPathComponent("river.bin").path
        try apple.write(to: URL(fileURLWithPath: applePath))
        try river.write(to: URL(fileURLWithPath: riverPath))
        let alice = try await store.signIn(email: "alice@example.com", name: nil).recordName
        let zone = ZoneID(zoneName: "Album")
        _ = try await store.modifyZones([ZoneOperation(.create, zone)], in: .private, as: alice)
        func photo(_ name: String, _ text: String) -> RecordOperation {
            RecordOperation(
                .create, Record(recordName: name, recordType: "Photo", zoneID: zone, fields: ["image": .assetID(text)]))
        }
        let (appleText, riverText) = (Self.text("apple.txt", apple), Self.text("river.bin", river))

        async let first = store.modifyRecords(
            ZoneWrite(
                [photo("p1", appleText)], in: zone, database: .private,
                assetFiles: AssetFiles([appleText: applePath])),
            as: alice)
        async let second = store.modifyRecords(
            ZoneWrite(
                [photo("p2", riverText)], in: zone, database: .private,
                assetFiles: AssetFiles([riverText: riverPath])),
            as: alice)
        let answers = try await [first, second]
        for (answer, bytes) in zip(answers, [apple, river]) {
            guard case .saved(let record)? = answer.first, case .assetID(let kept)? = record.fields["image"],
                let asset = AssetValue(text: kept)
            else {
                Issue.record("not saved: \(answer)")
                continue
            }
            // The store keeps the bytes, not the path.
            #expect(!kept.contains(".txt") && !kept.contains(".bin"), "\(kept)")
            #expect(try await store.assetBytes(checksum: asset.checksum) == [UInt8](bytes))
        }

        // The same file named again, by a write that does not say where it is: refused, nothing saved.
        let error = await #expect(throws: ShareError.self) {
            try await store.modifyRecords(
                [photo("p3", appleText)], in: zone, database: .private, atomic: false, as: alice)
        }
        #expect(error?.code == .badRequest)
        #expect(error?.reason.contains("names the file apple.txt") == true, "\(String(describing: error))")
        #expect(try await store.record("p3", in: zone, as: alice) == nil)
    }
}
