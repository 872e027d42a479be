import Foundation
import ShareKit

/// Writes the answer of `records/lookup`, `records/query` or `records/modify` as the store hands its outcomes
/// over (`RecordReceiver`), each entry by its index. A record the store reads in place (`RecordReading`) is
/// written from the store's own bytes, no `Record`, fields dictionary or `String` made for it: making them and
/// letting them go was a fifth of the emulator's time answering 200-record lookups. Anything
/// else is written as `WireRecordWriter.encode(_: RecordsAnswer)` writes its outcomes.
///
/// One store call at a time hands it outcomes, on one thread; `finish` is called after.
package final class RecordsAnswerWriter: RecordReceiver, @unchecked Sendable {
    /// The answer's caller and keys, each entry made as `RecordsAnswer.entry` makes it.
    private let shape: RecordsAnswer
    /// The entries, each where it was written: the store hands them over in any order.
    private var entries: JSONOutput
    private var places: [Range<Int>?] = []
    private lazy var encoder = WireCoding.bodyEncoder()
    /// Taken where the answer is made: the store hands outcomes over on a thread of its own, where the task's
    /// values are not.
    private let addressee = WireSpelling.addressee
    /// The refused entries, the first 50 of them, for the emulator's log of requests.
    package private(set) var refusals: [(recordName: String, error: ShareError)] = []

    package init(
        currentUser: UserRecordName, desiredKeys: [String]?, numbersAsStrings: Bool?, capacity: Int,
        listsZoneID: Bool = true
    ) {
        shape = RecordsAnswer(
            [], currentUser: currentUser, desiredKeys: desiredKeys, numbersAsStrings: numbersAsStrings,
            listsZoneID: listsZoneID)
        entries = JSONOutput(capacity: capacity)
    }

    package func receive(_ record: RecordReading, at index: Int) throws {
        let start = entries.count
        guard shape.numbersAsStrings != true,
            WireRecordWriter.write(
                record, desiredKeys: shape.desiredKeys, listsZoneID: shape.listsZoneID, into: &entries)
        else {
            try receive(.saved(record.record()), at: index)
            return
        }
        place(index, start)
    }

    package func receive(_ outcome: RecordOutcome, at index: Int) throws {
        let start = entries.count
        if case .saved(let record) = outcome, shape.numbersAsStrings != true,
            WireRecordWriter.write(
                record, desiredKeys: shape.desiredKeys, listsZoneID: shape.listsZoneID, into: &entries)
        {
            place(index, start)
            return
        }
        if case .failed(let name, let error) = outcome, refusals.count < 50 { refusals.append((name, error)) }
        let entry = WireSpelling.$addressee.withValue(addressee) { shape.entry(outcome) }
        try WireRecordWriter.record(entry, encoder: encoder, into: &entries)
        place(index, start)
    }

    private func place(_ index: Int, _ start: Int) {
        if index >= places.count { places.append(contentsOf: repeatElement(nil, count: index + 1 - places.count)) }
        places[index] = start..<entries.count
    }

    /// The answer: `{"records":[…]}` with the entries in index order, and the continuation marker.
    /// - Throws: `INTERNAL_ERROR` when an index before the last was handed no entry.
    package func finish(continuationMarker: String?) throws -> JSONOutput {
        var bytes = JSONOutput(capacity: entries.count + places.count + 64)
        var object = WireRecordWriter.ObjectWriter()
        try object.member("records", self, into: &bytes) { answer, bytes in try answer.writeArray(into: &bytes) }
        object.member("continuationMarker", continuationMarker, into: &bytes, WireRecordWriter.string)
        object.end(into: &bytes)
        return bytes
    }

    /// The entries as a JSON array, in index order.
    /// - Throws: `INTERNAL_ERROR` when an index before the last was handed no entry.
    package func writeArray(into bytes: inout JSONOutput) throws {
        bytes.append(UInt8(ascii: "["))
        try entries.withBytes { entries in
            for (index, place) in places.enumerated() {
                guard let place else {
                    throw ShareError(.internalError, "the store answered no outcome for entry \(index)")
                }
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: entries[place]))
            }
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// How many entries were handed over: the index the next one takes.
    package var count: Int { places.count }

    /// The bytes the entries take.
    var byteCount: Int { entries.count }
}

extension WireRecordWriter {
    /// Writes a record read in place as `write(_: Record, desiredKeys:into:)` writes the record it reads as,
    /// when every field it keeps is plain; false, with nothing written, otherwise.
    static func write(
        _ record: RecordReading, desiredKeys: [String]?, listsZoneID: Bool = true, into bytes: inout JSONOutput
    ) -> Bool {
        let start = bytes.count
        var object = ObjectWriter()
        object.member("recordName", record.recordName, into: &bytes, string(utf8:into:))
        object.member("recordType", record.recordType, into: &bytes, string(utf8:into:))
        object.member("recordChangeTag", record.changeTag, into: &bytes, string)
        var plain = true
        object.member("fields", record.fields, into: &bytes) { fields, bytes in
            var fieldsObject = ObjectWriter()
            do {
                try PackedFields.forEach(fields) { name, value in
                    guard plain else { return }
                    if let desiredKeys, !desiredKeys.contains(where: { $0.utf8.elementsEqual(name) }) { return }
                    fieldsObject.member(utf8Named: name, value, into: &bytes) { plain = packedValue($0, into: &$1) }
                }
            } catch {
                plain = false  // not packed fields: `RecordReading.record()` says why
            }
            fieldsObject.end(into: &bytes)
        }
        guard plain else {
            bytes.truncate(to: start)
            return false
        }
        // As `tail` writes a record's parent, share, zone and stamps.
        object.member("parent", record.parent, into: &bytes) { parent, bytes in
            var parentObject = ObjectWriter()
            parentObject.member("recordName", parent, into: &bytes, string(utf8:into:))
            parentObject.end(into: &bytes)
        }
        let zoneID = WireZoneID(record.zoneID)
        object.member("share", record.shareRecordName, into: &bytes) { share, bytes in
            var shareObject = ObjectWriter()
            shareObject.member("recordName", share, into: &bytes, string)
            shareObject.member("zoneID", zoneID, into: &bytes, zone)
            shareObject.end(into: &bytes)
        }
        object.member("zoneID", listsZoneID ? zoneID : nil, into: &bytes, zone)
        object.member("created", (record.createdAt, record.createdBy), into: &bytes, stamp)
        object.member("modified", (record.modifiedAt, record.modifiedBy), into: &bytes, stamp)
        answered(&object, into: &bytes)
        object.end(into: &bytes)
        return true
    }

    /// As `stamp` writes a `Stamp`.
    private static func stamp(_ stamp: (Int64, UnsafeRawBufferPointer), into bytes: inout JSONOutput) {
        var object = ObjectWriter()
        object.member("timestamp", stamp.0, into: &bytes, integer)
        object.member("userRecordName", stamp.1, into: &bytes, string(utf8:into:))
        object.member("deviceID", WireSpelling.deviceID, into: &bytes, WireRecordWriter.string)
        object.end(into: &bytes)
    }

    /// A packed field's `{"value":…,"type":…}` as `fieldValue` writes the value it unpacks to; false for one
    /// that is not plain, with the bytes written so far left for the caller to take back.
    private static func packedValue(_ value: PackedFields.Value, into bytes: inout JSONOutput) -> Bool {
        var object = ObjectWriter()
        switch value {
        case .string(let text):
            object.member("value", text, into: &bytes, string(utf8:into:))
            object.member("type", WireSpelling.fieldType(.string), into: &bytes, string)
        case .int64(let number):
            object.member("value", number, into: &bytes, integer)
            object.member("type", WireSpelling.fieldType(.int64), into: &bytes, string)
        case .timestamp(let number):
            object.member("value", number, into: &bytes, integer)
            object.member("type", WireSpelling.fieldType(.timestamp), into: &bytes, string)
        case .double(let number):
            guard number.isFinite else { return false }
            object.member("value", number, into: &bytes, double)
            object.member("type", WireSpelling.fieldType(.double), into: &bytes, string)
        case .other(let value):
            return fieldValue(value, into: &bytes)
        }
        object.end(into: &bytes)
        return true
    }
}

/// The emulator's `changes/zone` answer (`WireRecordWriter.encode(_: ZoneChangesAnswer)`): each zone's entry
/// with its records written as the store read them (`RecordsAnswerWriter`: the records, then the shares and
/// deletions, as `ZoneChangesResponse.ZoneResult` orders them), or a `ZoneResult` (an error, or records a
/// request filters by type or reverses).
package struct ZoneChangesAnswer {
    package enum Zone {
        case written(ZoneID, records: RecordsAnswerWriter, syncToken: String, moreComing: Bool)
        case result(ZoneChangesResponse.ZoneResult)
    }

    package var zones: [Zone]

    package init(zones: [Zone]) {
        self.zones = zones
    }

    /// The bytes to reserve for the answer.
    var capacity: Int {
        zones.reduce(64) { total, zone in
            if case .written(_, let records, _, _) = zone { return total + records.byteCount + 128 }
            return total + 512
        }
    }
}
