import Foundation
import JSONText

// The answer of `changes/zone`, read by hand as the records are (`WireRecordReader`): an apply over `http:`
// reads every zone it wrote back as change tags, and a plan reads whole zones, so a record's metadata was
// read by `JSONDecoder` once for each record the apply wrote.
extension WireRecordReader {
    /// The answer of `changes/zone`, or nil where `JSONDecoder` must read it.
    package static func zoneChangesResponse(_ data: Data) -> ZoneChangesResponse? {
        read(data) { reader in
            var zones: [ZoneChangesResponse.ZoneResult]?
            var seen = Seen()
            try reader.object { reader, key in
                guard key == "zones" else { throw Unreadable() }
                try seen.once(0)
                zones = try reader.array { reader in try zoneResult(&reader, data: data) }
            }
            guard let zones else { throw Unreadable() }
            return ZoneChangesResponse(zones: zones)
        }
    }

    private static func zoneResult(_ reader: inout JSONCursor, data: Data) throws -> ZoneChangesResponse.ZoneResult {
        var result = ZoneChangesResponse.ZoneResult()
        var seen = Seen()
        try reader.object { reader, key in
            switch key {
            case "zoneID":
                try seen.once(0)
                result.zoneID = try reader.isNull() ? nil : zone(&reader)
            case "records":
                try seen.once(1)
                result.records = try reader.isNull() ? nil : reader.array { reader in try record(&reader, data: data) }
            case "syncToken":
                try seen.once(2)
                result.syncToken = try reader.optionalString()
            case "moreComing":
                try seen.once(3)
                result.moreComing = try reader.optionalBool()
            case "serverErrorCode":
                try seen.once(4)
                result.serverErrorCode = try reader.optionalString()
            case "reason":
                try seen.once(5)
                result.reason = try reader.optionalString()
            default: throw Unreadable()
            }
        }
        return result
    }
}
