import Foundation
import JSONText
import ShareKit

/// The bytes of a saved plan's lines, written by hand: compact JSON in the words of CloudKit
/// (`recordName`, `recordType`, `{"type": "INT64", "value": 42}`), at a few bytes a byte of content.
///
/// Foundation's encoder wrote the plan's types as the compiler shapes them (`{"_0": {"int64": {"_0": 42}}}`),
/// pretty printed, 3.2 KB a record; the lines this writes hold a record in about its own size. The keys of a
/// map (a record's fields, a zone's change tags) are written in ascending order, so that one plan is always
/// the same bytes.
struct SavedPlanOutput {
    private(set) var bytes: [UInt8] = []
    /// For each object or array open, whether nothing was written in it yet.
    private var empty: [Bool] = []
    /// A key was just written: its value takes no comma.
    private var afterKey = false

    init(capacity: Int = 1 << 16) {
        bytes.reserveCapacity(capacity)
    }

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        empty.removeAll(keepingCapacity: true)
        afterKey = false
    }

    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        guard let last = empty.last else { return }
        if last { empty[empty.count - 1] = false } else { bytes.append(UInt8(ascii: ",")) }
    }

    mutating func openObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        empty.append(true)
    }

    mutating func closeObject() {
        bytes.append(UInt8(ascii: "}"))
        empty.removeLast()
    }

    mutating func openArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        empty.append(true)
    }

    mutating func closeArray() {
        bytes.append(UInt8(ascii: "]"))
        empty.removeLast()
    }

    /// A key of the format's own, which needs no escape.
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    /// A key from the plan (a field's name, a record's), escaped as a string is.
    mutating func key(escaping name: String) {
        separate()
        quoted(name)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    mutating func string(_ text: String) {
        separate()
        quoted(text)
    }

    /// Its digits, written straight into the line.
    mutating func integer(_ value: Int64) {
        separate()
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        guard magnitude >= 10 else {
            bytes.append(UInt8(ascii: "0") + UInt8(magnitude))
            return
        }
        // At most 20 digits (UInt64.max); written from the last.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            while magnitude > 0 {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[index...]))
        }
    }

    mutating func bool(_ value: Bool) {
        separate()
        let word: StaticString = value ? "true" : "false"
        word.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func null() {
        separate()
        let word: StaticString = "null"
        word.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// A number as `JSONNumber` writes it, which reads back as the same `Double`; JSON has no NaN or
    /// infinity, so those are the strings `NaN`, `Infinity` and `-Infinity`.
    mutating func double(_ value: Double) {
        guard let text = JSONNumber.text(value) else {
            string(JSONNumber.nonFiniteName(value))
            return
        }
        separate()
        bytes.append(contentsOf: text.utf8)
    }

    /// A value already encoded as JSON (by Foundation's encoder, for the parts of a plan that are few).
    mutating func json(_ data: Data) {
        separate()
        bytes.append(contentsOf: data)
    }

    /// The lines another output made, after these.
    mutating func append(_ lines: SavedPlanOutput) {
        bytes.append(contentsOf: lines.bytes)
    }

    mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
    }

    /// The text between quotes, in one pass: the runs that need no escape copied whole.
    private mutating func quoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices where JSONString.needsEscape(utf8[index]) {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                bytes.append(contentsOf: JSONString.escape(utf8[index]))
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

// MARK: - Values

extension SavedPlanOutput {
    /// A plan's value: a field value as CloudKit writes one (`{"type": "STRING", "value": "Milk"}`), a
    /// property's word as a JSON string (`"read-write"`), or a share's URL known after apply
    /// (`{"shareURL": {"zoneName": "Lists", "recordName": "root"}}`).
    mutating func plannedValue(_ value: PlannedValue) {
        switch value {
        case .value(let field): fieldValue(field)
        case .text(let text): string(text)
        case .shareURL(let zone, let record):
            openObject()
            key("shareURL")
            openObject()
            key("zoneName")
            string(zone)
            if let record {
                key("recordName")
                string(record)
            }
            closeObject()
            closeObject()
        }
    }

    /// `{"type": "INT64", "value": 42}`; a list as `{"type": "INT64_LIST", "value": [1, 2]}`, or, in the rare
    /// list whose elements are not all of its element type, `{"type": "LIST", "elementType": …, "value": [typed
    /// values]}`.
    mutating func fieldValue(_ value: FieldValue) {
        openObject()
        key("type")
        if case .list(let element, let values) = value,
            element.listType == nil || values.contains(where: { $0.type != element })
        {
            string("LIST")
            key("elementType")
            string(element.rawValue)
            key("value")
            openArray()
            for value in values { fieldValue(value) }
            closeArray()
            closeObject()
            return
        }
        string(value.type.rawValue)
        key("value")
        bareValue(value)
        closeObject()
    }

    /// A value without its type, which its field's `type` says.
    private mutating func bareValue(_ value: FieldValue) {
        switch value {
        case .string(let text): string(text)
        case .int64(let number): integer(number)
        case .double(let number): double(number)
        case .timestamp(let milliseconds): integer(milliseconds)
        case .bytes(let data): string(data.base64EncodedString())
        case .reference(let reference):
            openObject()
            key("recordName")
            string(reference.recordName)
            if let zone = reference.zoneID {
                key("zoneID")
                zoneID(zone)
            }
            key("action")
            string(reference.action.rawValue)
            closeObject()
        case .assetID(let text): string(text)
        case .location(let location):
            openObject()
            key("latitude")
            double(location.latitude)
            key("longitude")
            double(location.longitude)
            let optional: [(StaticString, Double?)] = [
                ("horizontalAccuracy", location.horizontalAccuracy), ("verticalAccuracy", location.verticalAccuracy),
                ("altitude", location.altitude), ("speed", location.speed), ("course", location.course),
            ]
            for case (let name, let number?) in optional {
                key(name)
                double(number)
            }
            if let timestamp = location.timestamp {
                key("timestamp")
                integer(timestamp)
            }
            closeObject()
        case .list(_, let values):
            openArray()
            for value in values { bareValue(value) }
            closeArray()
        }
    }

    mutating func zoneID(_ zone: ZoneID) {
        openObject()
        key("zoneName")
        string(zone.zoneName)
        key("ownerRecordName")
        string(zone.ownerRecordName)
        closeObject()
    }

    mutating func strings(_ texts: [String]) {
        openArray()
        for text in texts { string(text) }
        closeArray()
    }

    /// A map of strings, its keys in ascending order.
    mutating func stringMap(_ map: [String: String]) {
        openObject()
        for (name, value) in map.sorted(by: { $0.key < $1.key }) {
            key(escaping: name)
            string(value)
        }
        closeObject()
    }

    /// A record's fields by name, in ascending order.
    mutating func fields(_ fields: [String: PlannedValue]) {
        openObject()
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            key(escaping: name)
            plannedValue(value)
        }
        closeObject()
    }
}
