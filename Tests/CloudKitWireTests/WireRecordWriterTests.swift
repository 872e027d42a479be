import Foundation
import ShareKit
import Testing

@testable import CloudKitWire

/// The emulator writes responses of records without `JSONEncoder`: what it writes decodes to exactly what
/// `JSONEncoder`'s output decodes to, for every kind of record and value.
@Suite("Record response writer")
struct WireRecordWriterTests {
    static let zone = ZoneID(zoneName: "Lists", ownerRecordName: "_owner")

    static func record(_ name: String, _ fields: [String: FieldValue]) -> Record {
        Record(
            recordName: name, recordType: "Item", zoneID: zone, fields: fields, parent: nil, changeTag: "t1",
            created: Stamp(timestamp: 1_700_000_000_000, userRecordName: "_owner"),
            modified: Stamp(timestamp: 1_700_000_000_123, userRecordName: "_bob"))
    }

    static var response: RecordsResponse {
        var child = WireRecord(
            record(
                "child \"quoted\" / slash",
                [
                    "text": .string("tab\tnewline\ncarriage\r\u{0}nul \u{1F} unit \\ back \u{7F} é 🐑"),
                    "empty": .string(""), "min": .int64(.min), "max": .int64(.max),
                    "small": .double(.leastNonzeroMagnitude), "negativeZero": .double(-0.0),
                    "big": .double(1.7976931348623157e308),
                    "third": .double(1.0 / 3.0), "whole": .double(3), "when": .timestamp(-1), "asset": .assetID("a#b"),
                ]))
        child.parent = WireRecordPointer(recordName: "parent", recordChangeTag: "p7")
        child.share = WireShareReference(recordName: "share-1", zoneID: zone)
        var bare = WireRecord(recordName: "bare")
        bare.recordType = nil
        let share = Share(
            recordName: "share-1", zoneID: zone, rootRecordName: "parent", title: "Lists",
            publicPermission: .readOnly, ownerRecordName: "_owner",
            participants: [
                Participant(
                    userRecordName: "_bob", email: "bob@example.com", role: .privateUser, permission: .readWrite,
                    acceptance: .accepted)
            ], changeTag: "s1", shortGUID: "0abc", url: "https://www.icloud.com/share/0abc")
        return RecordsResponse(
            records: [
                WireRecord(record("plain", ["title": .string("Milk"), "qty": .int64(3), "price": .double(1.5)])),
                child,
                WireRecord(record("no fields", [:]), includeZoneID: false),
                WireRecord(record("list", ["tags": .list(elementType: .string, [.string("a"), .string("b")])])),
                WireRecord(
                    record("reference", ["to": .reference(Reference(recordName: "parent", action: .validate))])),
                WireRecord(record("infinite", ["x": .double(.infinity)])),
                WireRecord(deletedRecordName: "gone"),
                WireRecord(recordName: "refused", error: ShareError(.conflict, "changed since", subject: "refused")),
                WireRecord(share, currentUser: "_bob"),
                bare,
            ], continuationMarker: "marker \"42\"")
    }

    @Test("every record decodes as JSONEncoder's output does")
    func sameAsJSONEncoder() throws {
        var response = Self.response
        // JSON has no infinity: JSONEncoder refuses it, and so does the writer (it hands the record to it).
        response.records.removeAll { $0.recordName == "infinite" }
        let fast = try WireRecordWriter.encode(response)
        let reference = try WireCoding.bodyEncoder().encode(response)
        let decoder = JSONDecoder()
        let fromFast = try decoder.decode(RecordsResponse.self, from: fast)
        #expect(fromFast == (try decoder.decode(RecordsResponse.self, from: reference)))
        #expect(fromFast == response)
        // The same members, key for key, as JSON objects.
        let fastObject = try JSONSerialization.jsonObject(with: fast) as? NSDictionary
        let referenceObject = try JSONSerialization.jsonObject(with: reference) as? NSDictionary
        #expect(fastObject == referenceObject)
    }

    @Test("zone changes decode as JSONEncoder's output does")
    func zoneChanges() throws {
        var records = Self.response.records
        records.removeAll { $0.recordName == "infinite" }
        var changed = ZoneChangesResponse.ZoneResult(
            ZoneChanges(
                zoneID: Self.zone, changedRecords: [], changedShares: [], deletedRecordNames: [],
                token: ChangeToken(rawValue: "token \"1\""), moreComing: true),
            currentUser: nil)
        changed.records = records
        let response = ZoneChangesResponse(
            zones: [
                changed, ZoneChangesResponse.ZoneResult(zoneID: Self.zone, error: ShareError(.zoneNotFound, "no zone")),
            ])
        let decoder = JSONDecoder()
        let fast = try decoder.decode(ZoneChangesResponse.self, from: try WireRecordWriter.encode(response).data)
        #expect(fast == response)
        #expect(
            fast == (try decoder.decode(ZoneChangesResponse.self, from: try WireCoding.bodyEncoder().encode(response))))
    }

    /// Outcomes of every kind, as the emulator answers them.
    static var outcomes: [RecordOutcome] {
        var child = record(
            "child", ["text": .string("a \"quoted\"\nline"), "when": .timestamp(7), "third": .double(1.0 / 3)])
        child.parent = "plain"
        child.shareRecordName = "share-1"
        let share = Share(
            recordName: "share-1", zoneID: zone, rootRecordName: "child", title: "Lists", publicPermission: .none,
            ownerRecordName: "_owner",
            participants: [
                Participant(
                    userRecordName: "_bob", email: "bob@example.com", role: .privateUser, permission: .readOnly,
                    acceptance: .accepted)
            ], changeTag: "s1", shortGUID: "0abc", url: "https://www.icloud.com/share/0abc")
        return [
            .saved(record("plain", ["title": .string("Milk"), "qty": .int64(3), "price": .double(1.5)])),
            .saved(child),
            .saved(record("no fields", [:])),
            .saved(record("list", ["tags": .list(elementType: .string, [.string("a")]), "title": .string("x")])),
            .saved(record("asset", ["file": .assetID("a#b"), "title": .string("y")])),
            .savedShare(share),
            .deleted(recordName: "gone"),
            .failed(recordName: "refused", ShareError(.conflict, "changed since", subject: "refused")),
        ]
    }

    @Test(
        "an answer of outcomes is written as the same outcomes made into records are",
        arguments: [(nil, nil), (["title", "when"], nil), ([], nil), (nil, true), (["qty"], false)]
            as [([String]?, Bool?)])
    func answerOfOutcomes(desiredKeys: [String]?, numbersAsStrings: Bool?) throws {
        let answer = RecordsAnswer(
            Self.outcomes, currentUser: "_bob", desiredKeys: desiredKeys, numbersAsStrings: numbersAsStrings,
            continuationMarker: "k9")
        let decoder = JSONDecoder()
        let bytes = try WireRecordWriter.encode(answer).data
        let written = try decoder.decode(RecordsResponse.self, from: bytes)
        let reference = try decoder.decode(
            RecordsResponse.self, from: try WireCoding.bodyEncoder().encode(answer.response))
        #expect(written == reference)
        #expect(written.records.count == Self.outcomes.count)
        let text = String(decoding: bytes, as: UTF8.self)
        if desiredKeys == nil {
            #expect(text.contains(numbersAsStrings == true ? #""value":"3""# : #""value":3"#))
        }
        if let desiredKeys {
            #expect(
                written.records[0].fields.map { Set($0.keys) }
                    == Set(desiredKeys).intersection(["title", "qty", "price"]))
        }
    }

    /// `record` as a store hands it over in place (`RecordReading`): its text as UTF-8 bytes, its fields packed.
    static func withReading<T>(_ record: Record, _ body: (RecordReading) throws -> T) rethrows -> T {
        var buffers: [UnsafeMutableRawBufferPointer] = []
        defer { buffers.forEach { $0.deallocate() } }
        func bytes(_ content: some Collection<UInt8>) -> UnsafeRawBufferPointer {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: content.count, alignment: 1)
            buffer.copyBytes(from: content)
            buffers.append(buffer)
            return UnsafeRawBufferPointer(buffer)
        }
        let reading = RecordReading(
            recordName: bytes(record.recordName.utf8), recordType: bytes(record.recordType.utf8),
            zoneID: record.zoneID, fields: bytes(PackedFields.pack(record.fields)),
            parent: record.parent.map { bytes($0.utf8) },
            changeTag: record.changeTag ?? "", createdAt: record.created?.timestamp ?? 0,
            createdBy: bytes((record.created?.userRecordName ?? "").utf8), modifiedAt: record.modified?.timestamp ?? 0,
            modifiedBy: bytes((record.modified?.userRecordName ?? "").utf8), shareRecordName: record.shareRecordName)
        return try body(reading)
    }

    @Test(
        "records read in place, handed over in any order, are written as the records they read as",
        arguments: [(nil, nil), (["title", "when"], nil), ([], nil), (nil, true), (["qty"], false)]
            as [([String]?, Bool?)])
    func answerOfReadings(desiredKeys: [String]?, numbersAsStrings: Bool?) throws {
        var outcomes = Self.outcomes
        outcomes.append(.saved(Self.record("beyond ASCII é", ["title": .string("🐑 é"), "qty": .int64(-4)])))
        let answer = RecordsAnswer(
            outcomes, currentUser: "_bob", desiredKeys: desiredKeys, numbersAsStrings: numbersAsStrings,
            continuationMarker: "k9")
        let writer = RecordsAnswerWriter(
            currentUser: "_bob", desiredKeys: desiredKeys, numbersAsStrings: numbersAsStrings, capacity: 0)
        for (index, outcome) in outcomes.enumerated().reversed() {
            if case .saved(let record) = outcome {
                try Self.withReading(record) { try writer.receive($0, at: index) }
            } else {
                try writer.receive(outcome, at: index)
            }
        }
        let decoder = JSONDecoder()
        let written = try decoder.decode(
            RecordsResponse.self, from: try writer.finish(continuationMarker: "k9").data)
        let reference = try decoder.decode(
            RecordsResponse.self, from: try WireCoding.bodyEncoder().encode(answer.response))
        #expect(written == reference)
        #expect(written.records.map(\.recordName) == outcomes.map { WireRecord($0, currentUser: "_bob").recordName })
    }

    @Test("a record read in place is written from its bytes when its fields are plain, and made whole when not")
    func readingsWrittenByHand() throws {
        var bytes = JSONOutput(capacity: 0)
        let written = Self.outcomes.map { outcome -> Bool? in
            guard case .saved(let record) = outcome else { return nil }
            return Self.withReading(record) { WireRecordWriter.write($0, desiredKeys: nil, into: &bytes) }
        }
        #expect(written == [true, true, true, false, true, nil, nil, nil])
        // Only whole records were written: each decodes, and nothing of the refused one is left.
        let text =
            "["
            + String(decoding: bytes.data, as: UTF8.self).replacingOccurrences(
                of: "}{\"recordName", with: "},{\"recordName") + "]"
        let records = try JSONDecoder().decode([WireRecord].self, from: Data(text.utf8))
        #expect(records.map(\.recordName) == ["plain", "child", "no fields", "asset"])
    }

    @Test("text that is not UTF-8 is written as String repairs it, as the store's other reads do")
    func repairedText() throws {
        let writer = RecordsAnswerWriter(currentUser: "_bob", desiredKeys: nil, numbersAsStrings: nil, capacity: 0)
        let record = Self.record("x", ["title": .string("t")])
        try Self.withReading(record) { reading in
            var reading = reading
            let name: [UInt8] = [0x6E, 0xFF, 0x22]
            try name.withUnsafeBytes { name in
                reading.recordName = name
                try writer.receive(reading, at: 0)
            }
        }
        let answer = try JSONDecoder().decode(
            RecordsResponse.self, from: try writer.finish(continuationMarker: nil).data)
        #expect(answer.records.map(\.recordName) == ["n\u{FFFD}\""])
    }

    @Test("an answer with an entry the store never handed over is an internal error, not a shorter answer")
    func missingEntry() throws {
        let writer = RecordsAnswerWriter(currentUser: "_bob", desiredKeys: nil, numbersAsStrings: nil, capacity: 0)
        try writer.receive(.deleted(recordName: "a"), at: 0)
        try writer.receive(.deleted(recordName: "c"), at: 2)
        #expect(throws: ShareError.self) { _ = try writer.finish(continuationMarker: nil) }
    }

    @Test("a plain saved record is written from the record; one with a list or a reference is not")
    func recordsWrittenByHand() {
        var bytes = JSONOutput(capacity: 0)
        let written = Self.outcomes.map { outcome -> Bool? in
            guard case .saved(let record) = outcome else { return nil }
            return WireRecordWriter.write(record, desiredKeys: nil, into: &bytes)
        }
        #expect(written == [true, true, true, false, true, nil, nil, nil])
        // A field left out by desiredKeys does not stop the writer.
        #expect(
            WireRecordWriter.write(
                Self.record("list", ["tags": .list(elementType: .string, [.string("a")]), "title": .string("x")]),
                desiredKeys: ["title"], into: &bytes))
    }

    @Test("a record JSONEncoder refuses is refused, not written")
    func infinityIsRefused() {
        #expect(throws: (any Error).self) {
            try WireRecordWriter.encode(RecordsResponse(records: [WireRecord(Self.record("x", ["x": .double(.nan)]))]))
        }
    }

    @Test("plain records and shares are written by the writer itself, the others handed to JSONEncoder")
    func whatIsWrittenByHand() {
        var bytes = JSONOutput(capacity: 0)
        let written = Self.response.records.map { WireRecordWriter.write($0, into: &bytes) }
        #expect(written == [true, true, true, false, false, false, true, false, true, true])
    }
}

extension RecordsAnswer {
    /// The answer as the response it stands for: every outcome made into its `entry`, the oracle that
    /// `WireRecordWriter.encode(_: RecordsAnswer)` is checked against.
    var response: RecordsResponse {
        RecordsResponse(records: outcomes.map(entry), continuationMarker: continuationMarker)
    }
}
