import Foundation
import JSONText

// The answers of `records/accept` and `records/resolve`, read by hand as the records are
// (`WireRecordReader`): the ShortGUID Result Dictionary, with its share and root record.
extension WireRecordReader {
    /// The answer of `records/accept` or `records/resolve`, or nil where `JSONDecoder` must read it.
    package static func shareResults(_ data: Data) -> ShareResultsResponse? {
        read(data) { reader in
            var results: [WireShareMetadata]?
            var seen = Seen()
            try reader.object { reader, key in
                guard key == "results" else { throw Unreadable() }
                try seen.once(0)
                results = try reader.array { reader in try metadata(&reader, data: data) }
            }
            guard let results else { throw Unreadable() }
            return ShareResultsResponse(results: results)
        }
    }

    private static func metadata(_ reader: inout JSONCursor, data: Data) throws -> WireShareMetadata {
        var metadata = WireShareMetadata()
        var seen = Seen()
        try reader.object { reader, key in
            switch key {
            case "shortGUID":
                try seen.once(0)
                // A ShortGUID Dictionary, as the reference writes it; a bare string is left to `JSONDecoder`.
                guard !(try reader.isNull()) else { break }
                var guidSeen = Seen()
                try reader.object { reader, key in
                    switch key {
                    case "value":
                        try guidSeen.once(0)
                        metadata.shortGUID = try reader.string()
                    case "shouldFetchRootRecord":
                        try guidSeen.once(1)
                        metadata.shouldFetchRootRecord = try reader.optionalBool()
                    default: throw Unreadable()
                    }
                }
            case "containerIdentifier":
                try seen.once(10)
                metadata.containerIdentifier = try reader.optionalString()
            case "environment":
                try seen.once(11)
                metadata.environment = try reader.optionalString()
            case "databaseScope":
                try seen.once(12)
                metadata.databaseScope = try reader.optionalString()
            case "rootRecord":
                try seen.once(13)
                metadata.rootRecord = try reader.isNull() ? nil : record(&reader, data: data)
            case "zoneID":
                try seen.once(1)
                metadata.zoneID = try reader.isNull() ? nil : zone(&reader)
            case "rootRecordName":
                try seen.once(2)
                metadata.rootRecordName = try reader.optionalString()
            case "share":
                try seen.once(3)
                metadata.share = try reader.isNull() ? nil : record(&reader, data: data)
            case "ownerIdentity":
                try seen.once(4)
                metadata.ownerIdentity = try reader.isNull() ? nil : identity(&reader)
            case "participantType":
                try seen.once(5)
                metadata.participantType = try reader.optionalString()
            case "participantPermission":
                try seen.once(6)
                metadata.participantPermission = try reader.optionalString()
            case "participantStatus":
                try seen.once(7)
                metadata.participantStatus = try reader.optionalString()
            case "potentialMatchList":
                try seen.once(14)
                metadata.potentialMatchList =
                    try reader.isNull() ? nil : reader.array { reader in try identity(&reader) }
            case "serverErrorCode":
                try seen.once(8)
                metadata.serverErrorCode = try reader.optionalString()
            case "reason":
                try seen.once(9)
                metadata.reason = try reader.optionalString()
            default: throw Unreadable()
            }
        }
        return metadata
    }
}
