import Foundation
import ShareKit

/// Writes responses of records (`records/lookup`, `records/query`, `records/modify`, `changes/zone`) as JSON without
/// `JSONEncoder`, whose generic machinery is half of the emulator's time under load (issue 18): a 200-record
/// lookup is about a thousand fields.
///
/// It writes what `WireCoding.bodyEncoder()` writes, member for member: the plain record (names, type, change
/// tag, parent, share reference, zone, stamps, fields of strings, integers, finite doubles, timestamps and
/// asset IDs). A record with anything else (a share, an error, a list, a reference) is encoded by
/// `JSONEncoder` and put in its place, so the two can never disagree on a rare member.
package enum WireRecordWriter {
    /// The response as JSON.
    /// - Throws: what `JSONEncoder` throws for a record written by it.
    package static func encode(_ response: RecordsResponse) throws -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(response.records.count * 400 + 32)
        bytes.append(contentsOf: #"{"records":["#.utf8)
        let encoder = WireCoding.bodyEncoder()
        for (index, record) in response.records.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            if !write(record, into: &bytes) {
                bytes.append(contentsOf: try encoder.encode(record))
            }
        }
        bytes.append(UInt8(ascii: "]"))
        if let marker = response.continuationMarker {
            bytes.append(contentsOf: #","continuationMarker":"#.utf8)
            string(marker, into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        return Data(bytes)
    }

    /// The zone changes as JSON.
    /// - Throws: what `JSONEncoder` throws for a record written by it.
    package static func encode(_ response: ZoneChangesResponse) throws -> Data {
        var bytes: [UInt8] = []
        bytes.append(contentsOf: #"{"zones":["#.utf8)
        let encoder = WireCoding.bodyEncoder()
        for (index, zone) in response.zones.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            var first = true
            func key(_ name: String) {
                bytes.append(UInt8(ascii: first ? "{" : ","))
                first = false
                string(name, into: &bytes)
                bytes.append(UInt8(ascii: ":"))
            }
            if let zoneID = zone.zoneID {
                key("zoneID")
                self.zone(zoneID, into: &bytes)
            }
            if let records = zone.records {
                key("records")
                bytes.append(UInt8(ascii: "["))
                for (position, record) in records.enumerated() {
                    if position > 0 { bytes.append(UInt8(ascii: ",")) }
                    if !write(record, into: &bytes) { bytes.append(contentsOf: try encoder.encode(record)) }
                }
                bytes.append(UInt8(ascii: "]"))
            }
            if let token = zone.syncToken {
                key("syncToken")
                string(token, into: &bytes)
            }
            if let moreComing = zone.moreComing {
                key("moreComing")
                bytes.append(contentsOf: (moreComing ? "true" : "false").utf8)
            }
            if let code = zone.serverErrorCode {
                key("serverErrorCode")
                string(code, into: &bytes)
            }
            if let reason = zone.reason {
                key("reason")
                string(reason, into: &bytes)
            }
            if first { bytes.append(UInt8(ascii: "{")) }
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(contentsOf: "]}".utf8)
        return Data(bytes)
    }

    /// Writes a plain record; false, with nothing written, for any other.
    static func write(_ record: WireRecord, into bytes: inout [UInt8]) -> Bool {
        guard record.createShortGUID == nil, record.forRecord == nil, record.publicPermission == nil,
            record.participants == nil, record.owner == nil, record.currentUserParticipant == nil,
            record.shortGUID == nil, record.url == nil, record.serverErrorCode == nil, record.reason == nil,
            record.retryAfter == nil, record.uuid == nil,
            (record.fields ?? [:]).values.allSatisfy(isPlain)
        else { return false }
        var written: [UInt8] = []
        guard write(plain: record, into: &written) else { return false }
        bytes.append(contentsOf: written)
        return true
    }

    private static func write(plain record: WireRecord, into bytes: inout [UInt8]) -> Bool {
        var first = true
        func key(_ name: String) {
            bytes.append(UInt8(ascii: first ? "{" : ","))
            first = false
            string(name, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
        }
        if let name = record.recordName {
            key("recordName")
            string(name, into: &bytes)
        }
        if let type = record.recordType {
            key("recordType")
            string(type, into: &bytes)
        }
        if let tag = record.recordChangeTag {
            key("recordChangeTag")
            string(tag, into: &bytes)
        }
        if let fields = record.fields {
            key("fields")
            bytes.append(UInt8(ascii: "{"))
            for (index, (name, field)) in fields.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                string(name, into: &bytes)
                bytes.append(contentsOf: #":{"value":"#.utf8)
                switch field.value {
                case .string(let text), .assetID(let text): string(text, into: &bytes)
                case .int64(let number), .timestamp(let number): bytes.append(contentsOf: String(number).utf8)
                case .double(let number): bytes.append(contentsOf: "\(number)".utf8)
                default: return false
                }
                bytes.append(contentsOf: #","type":"#.utf8)
                string(field.value.type.rawValue, into: &bytes)
                bytes.append(UInt8(ascii: "}"))
            }
            bytes.append(UInt8(ascii: "}"))
        }
        if let parent = record.parent {
            key("parent")
            pointer(parent, into: &bytes)
        }
        if let share = record.share {
            key("share")
            bytes.append(contentsOf: #"{"recordName":"#.utf8)
            string(share.recordName, into: &bytes)
            if let zoneID = share.zoneID {
                bytes.append(contentsOf: #","zoneID":"#.utf8)
                zone(zoneID, into: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
        if let zoneID = record.zoneID {
            key("zoneID")
            zone(zoneID, into: &bytes)
        }
        if let created = record.created {
            key("created")
            stamp(created, into: &bytes)
        }
        if let modified = record.modified {
            key("modified")
            stamp(modified, into: &bytes)
        }
        if let deleted = record.deleted {
            key("deleted")
            bytes.append(contentsOf: (deleted ? "true" : "false").utf8)
        }
        if first { bytes.append(UInt8(ascii: "{")) }
        bytes.append(UInt8(ascii: "}"))
        return true
    }

    /// Whether the writer writes this field (a double must be finite: JSON has no infinity).
    private static func isPlain(_ field: WireField) -> Bool {
        switch field.value {
        case .string, .int64, .timestamp, .assetID: true
        case .double(let number): number.isFinite
        default: false
        }
    }

    private static func pointer(_ pointer: WireRecordPointer, into bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"recordName":"#.utf8)
        string(pointer.recordName, into: &bytes)
        if let tag = pointer.recordChangeTag {
            bytes.append(contentsOf: #","recordChangeTag":"#.utf8)
            string(tag, into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    private static func zone(_ zoneID: WireZoneID, into bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"zoneName":"#.utf8)
        string(zoneID.zoneName, into: &bytes)
        if let owner = zoneID.ownerRecordName {
            bytes.append(contentsOf: #","ownerRecordName":"#.utf8)
            string(owner, into: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    private static func stamp(_ stamp: Stamp, into bytes: inout [UInt8]) {
        bytes.append(contentsOf: #"{"timestamp":"#.utf8)
        bytes.append(contentsOf: String(stamp.timestamp).utf8)
        bytes.append(contentsOf: #","userRecordName":"#.utf8)
        string(stamp.userRecordName, into: &bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    /// A JSON string: quotes, backslashes and control characters escaped, `/` and the rest as UTF-8.
    static func string(_ text: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
            case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
            case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
