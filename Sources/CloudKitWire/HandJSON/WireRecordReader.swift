import Foundation
import JSONText
import ShareKit

/// Reads bodies of records (`records/modify` requests; answers of `records/modify`, `records/lookup` and
/// `records/query`) without `JSONDecoder`, whose generic machinery was a third of the `http:` client's time in
/// an apply and the largest part of the emulator's decoding of requests.
///
/// It reads what `WireRecordWriter` writes, member for member: plain records (names, type, change tag,
/// parent, share reference, zone, stamps, `deleted`, fields of strings, integers, doubles and timestamps
/// each with its `type`), shares with their participants, and the share metadata of `records/accept`. A
/// record with anything else (an error, another kind of field, a member
/// it does not know) is read by `JSONDecoder`, alone; a document it cannot read at all, or a record
/// `JSONDecoder` refuses, makes it answer nil, and the caller decodes the whole body with `JSONDecoder`, so
/// that what is accepted and every error message stay `JSONDecoder`'s.
package enum WireRecordReader {
    /// The answer of records, or nil where `JSONDecoder` must read it.
    package static func recordsResponse(_ data: Data) -> RecordsResponse? {
        read(data) { reader in
            var records: [WireRecord]?
            var marker: String?
            var seen = Seen()
            try reader.object { reader, key in
                switch key {
                case "records":
                    try seen.once(0)
                    records = try reader.array { reader in try record(&reader, data: data) }
                case "continuationMarker":
                    try seen.once(1)
                    marker = try reader.optionalString()
                default: throw Unreadable()
                }
            }
            guard let records else { throw Unreadable() }
            return RecordsResponse(records: records, continuationMarker: marker)
        }
    }

    /// A `records/modify` request, or nil where `JSONDecoder` must read it.
    package static func modifyRequest(_ data: Data) -> ModifyRecordsRequest? {
        read(data) { reader in
            var operations: [ModifyRecordsRequest.Operation]?
            var zoneID: WireZoneID?
            var atomic: Bool?
            var desiredKeys: [String]?
            var numbersAsStrings: Bool?
            var seen = Seen()
            try reader.object { reader, key in
                switch key {
                case "operations":
                    try seen.once(0)
                    operations = try reader.array { reader in try operation(&reader, data: data) }
                case "zoneID":
                    try seen.once(1)
                    zoneID = try reader.isNull() ? nil : zone(&reader)
                case "atomic":
                    try seen.once(2)
                    atomic = try reader.optionalBool()
                case "desiredKeys":
                    try seen.once(3)
                    desiredKeys = try reader.isNull() ? nil : reader.array { reader in try reader.string() }
                case "numbersAsStrings":
                    try seen.once(4)
                    numbersAsStrings = try reader.optionalBool()
                default: throw Unreadable()
                }
            }
            guard let operations else { throw Unreadable() }
            var request = ModifyRecordsRequest(operations: operations, zoneID: zoneID, atomic: atomic)
            request.desiredKeys = desiredKeys
            request.numbersAsStrings = numbersAsStrings
            return request
        }
    }

    /// A `records/lookup` request, or nil where `JSONDecoder` must read it.
    package static func lookupRequest(_ data: Data) -> LookupRecordsRequest? {
        read(data) { reader in
            var pointers: [WireRecordPointer]?
            var zoneID: WireZoneID?
            var desiredKeys: [String]?
            var numbersAsStrings: Bool?
            var seen = Seen()
            try reader.object { reader, key in
                switch key {
                case "records":
                    try seen.once(0)
                    pointers = try reader.array { reader in try pointer(&reader) }
                case "zoneID":
                    try seen.once(1)
                    zoneID = try reader.isNull() ? nil : zone(&reader)
                case "desiredKeys":
                    try seen.once(2)
                    desiredKeys = try reader.isNull() ? nil : reader.array { reader in try reader.string() }
                case "numbersAsStrings":
                    try seen.once(3)
                    numbersAsStrings = try reader.optionalBool()
                default: throw Unreadable()
                }
            }
            guard let pointers else { throw Unreadable() }
            return LookupRecordsRequest(
                records: pointers, zoneID: zoneID, desiredKeys: desiredKeys, numbersAsStrings: numbersAsStrings)
        }
    }

    // MARK: - Members

    /// As `WireParticipant.init(from:)` reads it: an absent type, permission or status has its default; an
    /// unknown word is left to `JSONDecoder`, which refuses it.
    private static func participant(_ reader: inout JSONCursor) throws -> WireParticipant {
        var participantId: String?
        var identity: WireUserIdentity?
        var type: String?
        var permission: String?
        var status: String?
        var seen = Seen()
        try reader.object { reader, key in
            switch key {
            case "participantId":
                try seen.once(0)
                participantId = try reader.optionalString()
            case "userIdentity":
                try seen.once(1)
                identity = try self.identity(&reader)
            case "type":
                try seen.once(2)
                type = try reader.optionalString()
            case "permission":
                try seen.once(3)
                permission = try reader.optionalString()
            case "acceptanceStatus":
                try seen.once(4)
                status = try reader.optionalString()
            default: throw Unreadable()
            }
        }
        guard let identity, let role = WireSpelling.participantRole(type ?? "USER"),
            let permission = WireSpelling.permission(permission ?? "READ_ONLY"),
            let acceptance = WireSpelling.requestedAcceptance(status ?? "INVITED")
        else { throw Unreadable() }
        return WireParticipant(
            participantId: participantId, userIdentity: identity, role: role, permission: permission,
            acceptance: acceptance)
    }

    static func identity(_ reader: inout JSONCursor) throws -> WireUserIdentity {
        var identity = WireUserIdentity(userRecordName: nil, email: nil, name: nil)
        var seen = Seen()
        try reader.object { reader, key in
            switch key {
            case "userRecordName":
                try seen.once(0)
                identity.userRecordName = try reader.optionalString()
            case "nameComponents":
                try seen.once(1)
                guard !(try reader.isNull()) else { return }
                var name = WireNameComponents(givenName: nil, familyName: nil)
                var nameSeen = Seen()
                try reader.object { reader, key in
                    switch key {
                    case "givenName":
                        try nameSeen.once(0)
                        name.givenName = try reader.optionalString()
                    case "familyName":
                        try nameSeen.once(1)
                        name.familyName = try reader.optionalString()
                    default: throw Unreadable()
                    }
                }
                identity.nameComponents = name
            case "lookupInfo":
                try seen.once(2)
                guard !(try reader.isNull()) else { return }
                var info = WireLookupInfo()
                var infoSeen = Seen()
                try reader.object { reader, key in
                    switch key {
                    case "emailAddress":
                        try infoSeen.once(0)
                        info.emailAddress = try reader.optionalString()
                    case "phoneNumber":
                        try infoSeen.once(1)
                        info.phoneNumber = try reader.optionalString()
                    case "userRecordName":
                        try infoSeen.once(2)
                        info.userRecordName = try reader.optionalString()
                    default: throw Unreadable()
                    }
                }
                identity.lookupInfo = info
            default: throw Unreadable()
            }
        }
        return identity
    }

    private static func operation(_ reader: inout JSONCursor, data: Data) throws -> ModifyRecordsRequest.Operation {
        var type: String?
        var record: WireRecord?
        var seen = Seen()
        try reader.object { reader, key in
            switch key {
            case "operationType":
                try seen.once(0)
                type = try reader.string()
            case "record":
                try seen.once(1)
                record = try self.record(&reader, data: data)
            default: throw Unreadable()
            }
        }
        guard let type, let record else { throw Unreadable() }
        return ModifyRecordsRequest.Operation(operationType: type, record: record)
    }

    /// A plain record read here, any other by `JSONDecoder` from its own bytes.
    static func record(_ reader: inout JSONCursor, data: Data) throws -> WireRecord {
        let start = reader.offset
        var attempt = reader
        if let record = try? plainRecord(&attempt) {
            reader = attempt
            return record
        }
        try reader.skipValue()
        let bytes = data[data.startIndex + start..<data.startIndex + reader.offset]
        guard let record = try? JSONDecoder().decode(WireRecord.self, from: bytes) else { throw Unreadable() }
        return record
    }

    private static func plainRecord(_ reader: inout JSONCursor) throws -> WireRecord {
        var record = WireRecord()
        var seen = Seen()
        try reader.object { reader, key in
            switch key {
            case "recordName":
                try seen.once(0)
                record.recordName = try reader.optionalString()
            case "recordType":
                try seen.once(1)
                record.recordType = try reader.optionalString()
            case "recordChangeTag":
                try seen.once(2)
                record.recordChangeTag = try reader.optionalString()
            case "fields":
                try seen.once(3)
                record.fields = try reader.isNull() ? nil : fields(&reader)
            case "parent":
                try seen.once(4)
                record.parent = try reader.isNull() ? nil : pointer(&reader)
            case "share":
                try seen.once(5)
                record.share = try reader.isNull() ? nil : shareReference(&reader)
            case "zoneID":
                try seen.once(6)
                record.zoneID = try reader.isNull() ? nil : zone(&reader)
            case "created":
                try seen.once(7)
                record.created = try reader.isNull() ? nil : stamp(&reader)
            case "modified":
                try seen.once(8)
                record.modified = try reader.isNull() ? nil : stamp(&reader)
            case "deleted":
                try seen.once(9)
                record.deleted = try reader.optionalBool()
            case "forRecord":
                try seen.once(10)
                record.forRecord = try reader.isNull() ? nil : pointer(&reader)
            case "publicPermission":
                try seen.once(11)
                record.publicPermission = try reader.optionalString()
            case "participants":
                try seen.once(12)
                record.participants = try reader.isNull() ? nil : reader.array { reader in try participant(&reader) }
            case "owner":
                try seen.once(13)
                record.owner = try reader.isNull() ? nil : participant(&reader)
            case "currentUserParticipant":
                try seen.once(14)
                record.currentUserParticipant = try reader.isNull() ? nil : participant(&reader)
            case "shortGUID":
                try seen.once(15)
                record.shortGUID = try reader.optionalString()
            case "url":
                try seen.once(16)
                record.url = try reader.optionalString()
            case "pluginFields":
                try seen.once(17)
                if try !reader.isNull() {
                    try reader.object { reader, _ in try reader.skipValue() }
                    record.pluginFields = WirePluginFields()
                }
            default: throw Unreadable()
            }
        }
        return record
    }

    private static func fields(_ reader: inout JSONCursor) throws -> [String: WireField] {
        var fields: [String: WireField] = [:]
        try reader.object { reader, name in
            let field = try self.field(&reader)
            guard fields.updateValue(field, forKey: name) == nil else { throw Unreadable() }
        }
        return fields
    }

    /// `{"value": …, "type": …}` in either order, of the four plain types.
    private static func field(_ reader: inout JSONCursor) throws -> WireField {
        var type: FieldType?
        var raw: JSONCursor?
        var seen = Seen()
        try reader.object { reader, key in
            switch key {
            case "type":
                try seen.once(0)
                type = WireSpelling.fieldType(try reader.string())
            case "value":
                try seen.once(1)
                raw = reader
                try reader.skipValue()
            default: throw Unreadable()
            }
        }
        guard let type, var value = raw else { throw Unreadable() }
        switch type {
        case .string: return WireField(.string(try value.string()))
        case .int64: return WireField(.int64(try value.integer()))
        case .timestamp: return WireField(.timestamp(try value.integer()))
        case .double: return WireField(.double(try value.double()))
        default: throw Unreadable()
        }
    }

    static func zone(_ reader: inout JSONCursor) throws -> WireZoneID {
        var name: String?
        var owner: String?
        var seen = Seen()
        try reader.object { reader, key in
            switch key {
            case "zoneName":
                try seen.once(0)
                name = try reader.string()
            case "ownerRecordName":
                try seen.once(1)
                owner = try reader.optionalString()
            case "zoneType":
                // Derived from the zone's name where an answer writes it: read and left.
                try seen.once(2)
                _ = try reader.optionalString()
            default: throw Unreadable()
            }
        }
        guard let name else { throw Unreadable() }
        if WireZoneID.readingOwnZones, owner != nil { owner = defaultOwnerName }
        return WireZoneID(ZoneID(zoneName: name, ownerRecordName: owner ?? defaultOwnerName), owner: owner)
    }

    private static func pointer(_ reader: inout JSONCursor) throws -> WireRecordPointer {
        var name: String?
        var tag: String?
        var seen = Seen()
        try reader.object { reader, key in
            switch key {
            case "recordName":
                try seen.once(0)
                name = try reader.string()
            case "recordChangeTag":
                try seen.once(1)
                tag = try reader.optionalString()
            default: throw Unreadable()
            }
        }
        guard let name else { throw Unreadable() }
        return WireRecordPointer(recordName: name, recordChangeTag: tag)
    }

    private static func shareReference(_ reader: inout JSONCursor) throws -> WireShareReference {
        var name: String?
        var zoneID: WireZoneID?
        var seen = Seen()
        try reader.object { reader, key in
            switch key {
            case "recordName":
                try seen.once(0)
                name = try reader.string()
            case "zoneID":
                try seen.once(1)
                zoneID = try reader.isNull() ? nil : zone(&reader)
            default: throw Unreadable()
            }
        }
        guard let name else { throw Unreadable() }
        var reference = WireShareReference(recordName: name, zoneID: nil)
        reference.zoneID = zoneID
        return reference
    }

    private static func stamp(_ reader: inout JSONCursor) throws -> WireStamp {
        var timestamp: Int64?
        var user: String?
        var device: String?
        var seen = Seen()
        try reader.object { reader, key in
            switch key {
            case "timestamp":
                try seen.once(0)
                timestamp = try reader.integer()
            case "userRecordName":
                try seen.once(1)
                user = try reader.string()
            case "deviceID":
                try seen.once(2)
                device = try reader.optionalString()
            default: throw Unreadable()
            }
        }
        guard let timestamp, let user else { throw Unreadable() }
        return WireStamp(Stamp(timestamp: timestamp, userRecordName: user), deviceID: device)
    }

    // MARK: - The document

    /// Anything the reader leaves to `JSONDecoder`.
    struct Unreadable: Error {}

    /// The members an object had: a member twice is left to `JSONDecoder`.
    struct Seen {
        private var bits: UInt32 = 0

        mutating func once(_ bit: Int) throws {
            let mask: UInt32 = 1 << UInt32(bit)
            guard bits & mask == 0 else { throw Unreadable() }
            bits |= mask
        }
    }

    static func read<Value>(_ data: Data, _ body: (inout JSONCursor) throws -> Value) -> Value? {
        data.withUnsafeBytes { raw -> Value? in
            var reader = JSONCursor(raw.bindMemory(to: UInt8.self))
            guard let value = try? body(&reader) else { return nil }
            reader.skipSpace()
            return reader.atEnd ? value : nil
        }
    }
}

extension WireZoneID {
    /// A zone ID as read, its owner as written (nil when absent).
    fileprivate init(_ zoneID: ZoneID, owner: String?) {
        self.init(zoneID)
        ownerRecordName = owner
    }
}
