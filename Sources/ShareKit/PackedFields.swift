import Foundation

/// The compact binary form of a record's fields: what the SQLite store keeps in its `fields` column, and what
/// a store hands a `RecordReceiver` (`RecordReading.fields`) so that a server answering many records writes
/// them out without a `[String: FieldValue]` made for each.
///
/// Records are written far more often than they are inspected by hand, and Foundation's JSON coders cost
/// more than the SQLite insert itself; this format costs a fraction. Keys are sorted, so equal fields give
/// equal bytes. Layout: a version byte, a varint count, then per field its name and a tagged value.
package enum PackedFields {
    static let version: UInt8 = 1

    package static func pack(_ fields: [String: FieldValue]) -> Data {
        var writer = PackWriter()
        writer.bytes.reserveCapacity(16 + fields.count * 24)
        writer.byte(version)
        writer.varint(UInt64(fields.count))
        for name in fields.keys.sorted() {
            writer.string(name)
            // Force-unwrap free: the key came from the dictionary.
            if let value = fields[name] { writer.value(value) }
        }
        return Data(writer.bytes)
    }

    package static func unpack(_ data: Data) throws -> [String: FieldValue] {
        try data.withUnsafeBytes { try unpack($0) }
    }

    /// The fields of these bytes, read in place, not copied first (every record a lookup answers is
    /// decoded, from SQLite's own bytes).
    /// - Throws: `PackedFieldsError` for bytes that are not packed fields.
    package static func unpack(_ bytes: UnsafeRawBufferPointer) throws -> [String: FieldValue] {
        var reader = try PackReader(start: bytes)
        let count = try reader.varint()
        var fields = [String: FieldValue](minimumCapacity: Int(min(count, 1024)))
        for _ in 0..<count {
            let name = try reader.string()
            fields[name] = try reader.value()
        }
        return fields
    }

    /// One field's value as `forEach` hands it: strings as their UTF-8 bytes in place, numbers as they are,
    /// any other kind unpacked.
    package enum Value {
        case string(UnsafeRawBufferPointer)
        case int64(Int64)
        case double(Double)
        case timestamp(Int64)
        case other(FieldValue)
    }

    /// Each field of these bytes in name order, its name as UTF-8 bytes: both valid only inside `body`.
    /// - Throws: `PackedFieldsError` for bytes that are not packed fields, or what `body` throws.
    package static func forEach(
        _ bytes: UnsafeRawBufferPointer, _ body: (_ name: UnsafeRawBufferPointer, _ value: Value) throws -> Void
    ) throws {
        var reader = try PackReader(start: bytes)
        let count = try reader.varint()
        for _ in 0..<count {
            let name = try reader.raw(try reader.varint())
            try body(name, try reader.plainValue())
        }
    }
}

/// Why bytes are not packed fields: in a store, its file is damaged.
package enum PackedFieldsError: Error, CustomStringConvertible {
    case unknownVersion(UInt8)
    case truncated
    case unknownTag(UInt8)

    package var description: String {
        switch self {
        case .unknownVersion(let v): "stored fields have format version \(v), which this sharelane does not know"
        case .truncated: "stored fields end early: the store file is damaged"
        case .unknownTag(let t): "stored fields hold an unknown value tag \(t): the store file is damaged"
        }
    }
}

private struct PackWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ b: UInt8) { bytes.append(b) }

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7f) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func int64(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func double(_ value: Double) {
        var bits = value.bitPattern
        for _ in 0..<8 {
            bytes.append(UInt8(bits & 0xff))
            bits >>= 8
        }
    }

    mutating func string(_ s: String) {
        let utf8 = s.utf8
        varint(UInt64(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    mutating func optionalDouble(_ value: Double?) {
        if let value {
            byte(1)
            double(value)
        } else {
            byte(0)
        }
    }

    mutating func value(_ value: FieldValue) {
        switch value {
        case .string(let s):
            byte(1)
            string(s)
        case .int64(let i):
            byte(2)
            int64(i)
        case .double(let d):
            byte(3)
            double(d)
        case .timestamp(let t):
            byte(4)
            int64(t)
        case .bytes(let data):
            byte(5)
            varint(UInt64(data.count))
            bytes.append(contentsOf: data)
        case .reference(let r):
            byte(6)
            string(r.recordName)
            string(r.action.rawValue)
            if let zone = r.zoneID {
                byte(1)
                string(zone.zoneName)
                string(zone.ownerRecordName)
            } else {
                byte(0)
            }
        case .assetID(let a):
            byte(7)
            string(a)
        case .location(let l):
            byte(8)
            double(l.latitude)
            double(l.longitude)
            optionalDouble(l.horizontalAccuracy)
            optionalDouble(l.verticalAccuracy)
            optionalDouble(l.altitude)
            optionalDouble(l.speed)
            optionalDouble(l.course)
            if let t = l.timestamp {
                byte(1)
                int64(t)
            } else {
                byte(0)
            }
        case .list(let elementType, let values):
            byte(9)
            string(elementType.rawValue)
            varint(UInt64(values.count))
            for v in values { self.value(v) }
        }
    }
}

/// Reads the bytes of one `unpack` or `forEach` call; valid only inside it.
private struct PackReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    /// A reader past the version byte, which it checks.
    init(start bytes: UnsafeRawBufferPointer) throws {
        self.bytes = bytes
        let v = try byte()
        guard v == PackedFields.version else { throw PackedFieldsError.unknownVersion(v) }
    }

    mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw PackedFieldsError.truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            result |= UInt64(b & 0x7f) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw PackedFieldsError.truncated }
        }
    }

    mutating func int64() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    mutating func double() throws -> Double {
        guard offset + 8 <= bytes.count else { throw PackedFieldsError.truncated }
        var bits: UInt64 = 0
        for i in 0..<8 { bits |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return Double(bitPattern: bits)
    }

    mutating func raw(_ count: UInt64) throws -> UnsafeRawBufferPointer {
        guard count <= UInt64(bytes.count - offset) else { throw PackedFieldsError.truncated }
        let end = offset + Int(count)
        defer { offset = end }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<end])
    }

    mutating func string() throws -> String {
        String(decoding: try raw(try varint()), as: UTF8.self)
    }

    mutating func optionalDouble() throws -> Double? {
        try byte() == 1 ? try double() : nil
    }

    /// The next value, a string's bytes read in place and the numbers as they are.
    mutating func plainValue() throws -> PackedFields.Value {
        guard offset < bytes.count else { throw PackedFieldsError.truncated }
        switch bytes[offset] {
        case 1:
            offset += 1
            return .string(try raw(try varint()))
        case 2:
            offset += 1
            return .int64(try int64())
        case 3:
            offset += 1
            return .double(try double())
        case 4:
            offset += 1
            return .timestamp(try int64())
        default: return .other(try value())
        }
    }

    mutating func value() throws -> FieldValue {
        let tag = try byte()
        switch tag {
        case 1: return .string(try string())
        case 2: return .int64(try int64())
        case 3: return .double(try double())
        case 4: return .timestamp(try int64())
        case 5: return .bytes(Data(try raw(try varint())))
        case 6:
            let name = try string()
            let action = ReferenceAction(rawValue: try string()) ?? .none
            var zone: ZoneID?
            if try byte() == 1 {
                let zoneName = try string()
                zone = ZoneID(zoneName: zoneName, ownerRecordName: try string())
            }
            return .reference(Reference(recordName: name, zoneID: zone, action: action))
        case 7: return .assetID(try string())
        case 8:
            var l = Location(latitude: try double(), longitude: try double())
            l.horizontalAccuracy = try optionalDouble()
            l.verticalAccuracy = try optionalDouble()
            l.altitude = try optionalDouble()
            l.speed = try optionalDouble()
            l.course = try optionalDouble()
            l.timestamp = try byte() == 1 ? try int64() : nil
            return .location(l)
        case 9:
            let elementType = FieldType(rawValue: try string()) ?? .string
            let count = try varint()
            var values: [FieldValue] = []
            for _ in 0..<count { values.append(try value()) }
            return .list(elementType: elementType, values)
        default:
            throw PackedFieldsError.unknownTag(tag)
        }
    }
}
