import Foundation
import JSONText
import ShareKit

/// Writes bodies of records (`records/lookup`, `records/query`, `records/modify` and `changes/zone` answers,
/// `records/modify` requests, `records/accept` answers) as JSON without `JSONEncoder`, whose generic machinery
/// is half of the emulator's time under load: a 200-record lookup is about a thousand fields.
///
/// It writes what `WireCoding.bodyEncoder()` writes, member for member: the plain record (names, type, change
/// tag, parent, share reference, zone, stamps, fields of strings, integers, finite doubles, timestamps and
/// asset IDs) and shares with their participants. A record with anything else (an error, a list, a
/// reference) is encoded by `JSONEncoder` and put in its place, so the two can never disagree on a rare
/// member.
package enum WireRecordWriter {
    /// The response as JSON.
    /// - Throws: what `JSONEncoder` throws for a record written by it.
    package static func encode(_ response: RecordsResponse) throws -> Data {
        try body(capacity: response.records.count * 400 + 32) { object, bytes, encoder in
            try object.member("records", response.records, into: &bytes) {
                try records($0, encoder: encoder, into: &$1)
            }
            object.member("continuationMarker", response.continuationMarker, into: &bytes, string)
        }.data
    }

    /// The emulator's answer as JSON: what encoding its outcomes' `entry`s would write, with a plain saved
    /// record written straight from the record, no `WireRecord` made for it (making them, their fields
    /// dictionaries and letting them go was a fifth of the time the emulator spent answering a 200-record
    /// lookup): each outcome handed to a `RecordsAnswerWriter`. As the bytes written, which the
    /// emulator's server takes with one copy.
    /// - Throws: what `JSONEncoder` throws for a record written by it.
    package static func encode(_ answer: RecordsAnswer) throws -> JSONOutput {
        let writer = RecordsAnswerWriter(
            currentUser: answer.currentUser, desiredKeys: answer.desiredKeys, numbersAsStrings: answer.numbersAsStrings,
            capacity: answer.outcomes.count * 400)
        for (index, outcome) in answer.outcomes.enumerated() { try writer.receive(outcome, at: index) }
        return try writer.finish(continuationMarker: answer.continuationMarker)
    }

    /// A `records/modify` request as JSON: what the `http:` and `cloudkit:` clients send for an apply's records.
    /// - Throws: what `JSONEncoder` throws for a record written by it.
    package static func encode(_ request: ModifyRecordsRequest) throws -> Data {
        try body(capacity: request.operations.count * 300 + 64) { object, bytes, encoder in
            try object.member("operations", request.operations, into: &bytes) { operations, bytes in
                try array(operations, into: &bytes) { operation, bytes in
                    var operationObject = ObjectWriter()
                    operationObject.member("operationType", operation.operationType, into: &bytes, string)
                    try operationObject.member("record", operation.record, into: &bytes) {
                        try record($0, encoder: encoder, into: &$1)
                    }
                    operationObject.end(into: &bytes)
                }
            }
            object.member("zoneID", request.zoneID, into: &bytes, zone)
            object.member("atomic", request.atomic, into: &bytes, boolean)
            object.member("desiredKeys", request.desiredKeys, into: &bytes) { keys, bytes in
                array(keys, into: &bytes, string)
            }
            object.member("numbersAsStrings", request.numbersAsStrings, into: &bytes, boolean)
        }.data
    }

    /// The zone changes as JSON: the bytes written.
    /// - Throws: what `JSONEncoder` throws for a record written by it.
    package static func encode(_ response: ZoneChangesResponse) throws -> JSONOutput {
        try encode(ZoneChangesAnswer(zones: response.zones.map(ZoneChangesAnswer.Zone.result)))
    }

    /// The emulator's `changes/zone` answer as JSON, each zone's entry as `encode(_: ZoneChangesResponse)` writes
    /// one: the bytes written.
    /// - Throws: what `JSONEncoder` throws for a record written by it.
    package static func encode(_ answer: ZoneChangesAnswer) throws -> JSONOutput {
        try body(capacity: answer.capacity) { object, bytes, encoder in
            try object.member("zones", answer.zones, into: &bytes) { zones, bytes in
                try array(zones, into: &bytes) { zone, bytes in
                    var zoneObject = ObjectWriter()
                    switch zone {
                    case .result(let zone):
                        zoneObject.member("zoneID", zone.zoneID, into: &bytes, self.zone)
                        try zoneObject.member("records", zone.records, into: &bytes) {
                            try records($0, encoder: encoder, into: &$1)
                        }
                        zoneObject.member("syncToken", zone.syncToken, into: &bytes, string)
                        zoneObject.member("moreComing", zone.moreComing, into: &bytes, boolean)
                        zoneObject.member("serverErrorCode", zone.serverErrorCode, into: &bytes, string)
                        zoneObject.member("reason", zone.reason, into: &bytes, string)
                    case .written(let zoneID, let records, let syncToken, let moreComing):
                        zoneObject.member("zoneID", WireZoneID(zoneID), into: &bytes, self.zone)
                        try zoneObject.member("records", records, into: &bytes) { try $0.writeArray(into: &$1) }
                        zoneObject.member("syncToken", syncToken, into: &bytes, string)
                        zoneObject.member("moreComing", moreComing, into: &bytes, boolean)
                    }
                    zoneObject.end(into: &bytes)
                }
            }
        }
    }

    /// A body: one JSON object whose members `members` writes, records in it by hand or by `JSONEncoder`.
    private static func body(
        capacity: Int, _ members: (inout ObjectWriter, inout JSONOutput, JSONEncoder) throws -> Void
    ) rethrows -> JSONOutput {
        var bytes = JSONOutput(capacity: capacity)
        var object = ObjectWriter()
        try members(&object, &bytes, WireCoding.bodyEncoder())
        object.end(into: &bytes)
        return bytes
    }

    /// A JSON array of records, each written by hand or by `encoder`.
    private static func records(_ records: [WireRecord], encoder: JSONEncoder, into bytes: inout JSONOutput) throws {
        try recordArray(records, into: &bytes) { record, bytes in
            try self.record(record, encoder: encoder, into: &bytes)
        }
    }

    /// A JSON array of records. After the first, room is made for the others at its size: a large answer's
    /// buffer then grows once, not by doubling with a copy each time.
    private static func recordArray<Element>(
        _ elements: [Element], into bytes: inout JSONOutput, _ element: (Element, inout JSONOutput) throws -> Void
    ) rethrows {
        let start = bytes.count
        bytes.append(UInt8(ascii: "["))
        for (index, value) in elements.enumerated() {
            if index == 1 {
                bytes.reserveCapacity(bytes.count + (bytes.count - start) * (elements.count - 1) * 5 / 4)
            }
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            try element(value, &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// One record, written by hand where the writer can, by `encoder` otherwise.
    static func record(_ record: WireRecord, encoder: JSONEncoder, into bytes: inout JSONOutput) throws {
        if !write(record, into: &bytes) { bytes.append(contentsOf: try encoder.encode(record)) }
    }

    /// A JSON array, each element written by `element`.
    private static func array<Element>(
        _ elements: [Element], into bytes: inout JSONOutput, _ element: (Element, inout JSONOutput) throws -> Void
    ) rethrows {
        bytes.append(UInt8(ascii: "["))
        for (index, value) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            try element(value, &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// The answer of `records/accept` or `records/resolve` as JSON: each share with its participants.
    /// - Throws: what `JSONEncoder` throws for a share written by it.
    package static func encode(_ response: ShareResultsResponse) throws -> Data {
        try body(capacity: response.results.count * 1_500 + 16) { object, bytes, encoder in
            try object.member("results", response.results, into: &bytes) { results, bytes in
                try array(results, into: &bytes) { metadata, bytes in
                    var metadataObject = ObjectWriter()
                    metadataObject.member("shortGUID", metadata.shortGUID, into: &bytes) { value, bytes in
                        var guidObject = ObjectWriter()
                        guidObject.member("value", value, into: &bytes, string)
                        guidObject.member(
                            "shouldFetchRootRecord", metadata.shouldFetchRootRecord, into: &bytes, boolean)
                        guidObject.end(into: &bytes)
                    }
                    metadataObject.member(
                        "containerIdentifier", metadata.containerIdentifier, into: &bytes, string)
                    metadataObject.member("environment", metadata.environment, into: &bytes, string)
                    metadataObject.member("databaseScope", metadata.databaseScope, into: &bytes, string)
                    metadataObject.member("zoneID", metadata.zoneID, into: &bytes, zone)
                    metadataObject.member("rootRecordName", metadata.rootRecordName, into: &bytes, string)
                    try metadataObject.member("rootRecord", metadata.rootRecord, into: &bytes) {
                        try record($0, encoder: encoder, into: &$1)
                    }
                    try metadataObject.member("share", metadata.share, into: &bytes) {
                        try record($0, encoder: encoder, into: &$1)
                    }
                    metadataObject.member("ownerIdentity", metadata.ownerIdentity, into: &bytes, identity)
                    metadataObject.member("participantType", metadata.participantType, into: &bytes, string)
                    metadataObject.member(
                        "participantPermission", metadata.participantPermission, into: &bytes, string)
                    metadataObject.member("participantStatus", metadata.participantStatus, into: &bytes, string)
                    metadataObject.member("potentialMatchList", metadata.potentialMatchList, into: &bytes) {
                        list, bytes in array(list, into: &bytes, identity)
                    }
                    metadataObject.member("serverErrorCode", metadata.serverErrorCode, into: &bytes, string)
                    metadataObject.member("reason", metadata.reason, into: &bytes, string)
                    metadataObject.end(into: &bytes)
                }
            }
        }.data
    }

    /// Writes a plain record; false, with nothing written, for any other.
    static func write(_ record: WireRecord, into bytes: inout JSONOutput) -> Bool {
        guard record.createShortGUID == nil, record.serverErrorCode == nil, record.reason == nil,
            record.retryAfter == nil
        else { return false }
        // Written in place, not into a scratch array copied after; taken back if a field is not plain.
        let start = bytes.count
        guard write(plain: record, into: &bytes) else {
            bytes.truncate(to: start)
            return false
        }
        return true
    }

    /// Writes a saved record as `WireRecord(record).keepingFields(desiredKeys)` is written, when every field it
    /// keeps is plain; false, with nothing written, otherwise.
    static func write(_ record: Record, desiredKeys: [String]?, listsZoneID: Bool = true, into bytes: inout JSONOutput)
        -> Bool
    {
        let start = bytes.count
        var object = ObjectWriter()
        head(&object, name: record.recordName, type: record.recordType, tag: record.changeTag, into: &bytes)
        var plain = true
        object.member("fields", record.fields, into: &bytes) { fields, bytes in
            var fieldsObject = ObjectWriter()
            for (name, value) in fields where plain && desiredKeys?.contains(name) != false {
                fieldsObject.member(named: name, value, into: &bytes) { plain = fieldValue($0, into: &$1) }
            }
            fieldsObject.end(into: &bytes)
        }
        guard plain else {
            bytes.truncate(to: start)
            return false
        }
        tail(
            &object, parent: record.parent.map { WireRecordPointer(recordName: $0) },
            share: record.shareRecordName.map { WireShareReference(recordName: $0, zoneID: record.zoneID) },
            zoneID: listsZoneID ? WireZoneID(record.zoneID) : nil, created: record.created.map { WireStamp($0) },
            modified: record.modified.map { WireStamp($0) }, into: &bytes)
        answered(&object, into: &bytes)
        object.end(into: &bytes)
        return true
    }

    /// Writes the record; false, with the bytes written so far left for the caller to take back, when a field
    /// is not plain.
    private static func write(plain record: WireRecord, into bytes: inout JSONOutput) -> Bool {
        var object = ObjectWriter()
        head(&object, name: record.recordName, type: record.recordType, tag: record.recordChangeTag, into: &bytes)
        var plain = true
        object.member("fields", record.fields, into: &bytes) { fields, bytes in
            var fieldsObject = ObjectWriter()
            for (name, field) in fields where plain {
                fieldsObject.member(named: name, field, into: &bytes) { field, bytes in
                    plain = !field.numbersAsStrings && fieldValue(field.value, into: &bytes)
                }
            }
            fieldsObject.end(into: &bytes)
        }
        guard plain else { return false }
        tail(
            &object, parent: record.parent, share: record.share, zoneID: record.zoneID, created: record.created,
            modified: record.modified, into: &bytes)
        object.member("deleted", record.deleted, into: &bytes, boolean)
        object.member("pluginFields", record.pluginFields, into: &bytes) { _, bytes in emptyObject(into: &bytes) }
        // A share's members.
        object.member("forRecord", record.forRecord, into: &bytes, pointer)
        object.member("publicPermission", record.publicPermission, into: &bytes, string)
        object.member("participants", record.participants, into: &bytes) { participants, bytes in
            array(participants, into: &bytes, participant)
        }
        object.member("owner", record.owner, into: &bytes, participant)
        object.member("currentUserParticipant", record.currentUserParticipant, into: &bytes, participant)
        object.member("shortGUID", record.shortGUID, into: &bytes, string)
        object.member("url", record.url, into: &bytes, string)
        object.end(into: &bytes)
        return true
    }

    /// A record's first members, before its fields: in `WireRecord`'s order, as `JSONEncoder` writes them.
    private static func head(
        _ object: inout ObjectWriter, name: String?, type: String?, tag: String?, into bytes: inout JSONOutput
    ) {
        object.member("recordName", name, into: &bytes, string)
        object.member("recordType", type, into: &bytes, string)
        object.member("recordChangeTag", tag, into: &bytes, string)
    }

    /// A record's members after its fields, up to its stamps.
    private static func tail(
        _ object: inout ObjectWriter, parent: WireRecordPointer?, share: WireShareReference?, zoneID: WireZoneID?,
        created: WireStamp?, modified: WireStamp?, into bytes: inout JSONOutput
    ) {
        object.member("parent", parent, into: &bytes, pointer)
        object.member("share", share, into: &bytes) { share, bytes in
            var shareObject = ObjectWriter()
            shareObject.member("recordName", share.recordName, into: &bytes, string)
            shareObject.member("zoneID", share.zoneID, into: &bytes, zone)
            shareObject.end(into: &bytes)
        }
        object.member("zoneID", zoneID, into: &bytes, zone)
        object.member("created", created, into: &bytes, stamp)
        object.member("modified", modified, into: &bytes, stamp)
    }

    /// The members after a saved record's stamps in an answer, as `WireRecord.asAnswered` sets them:
    /// `"deleted":false,"pluginFields":{}`.
    static func answered(_ object: inout ObjectWriter, into bytes: inout JSONOutput) {
        object.member("deleted", false, into: &bytes, boolean)
        object.member("pluginFields", WirePluginFields(), into: &bytes) { _, bytes in emptyObject(into: &bytes) }
    }

    private static func emptyObject(into bytes: inout JSONOutput) {
        bytes.append(UInt8(ascii: "{"))
        bytes.append(UInt8(ascii: "}"))
    }

    /// A field's `{"value":…,"type":…}` when its value is plain: a string, an integer, a timestamp, a finite
    /// double (JSON has no infinity) or an asset ID that names no asset; false for any other, with the bytes
    /// written so far left for the caller to take back.
    static func fieldValue(_ value: FieldValue, into bytes: inout JSONOutput) -> Bool {
        var object = ObjectWriter()
        switch value {
        case .string(let text): object.member("value", text, into: &bytes, string)
        case .assetID(let text):
            guard WireAsset(assetIDText: text) == nil else { return false }
            object.member("value", text, into: &bytes, string)
        case .int64(let number), .timestamp(let number): object.member("value", number, into: &bytes, integer)
        case .double(let number):
            guard number.isFinite else { return false }
            object.member("value", number, into: &bytes, double)
        default: return false
        }
        object.member("type", WireSpelling.fieldType(value.type), into: &bytes, string)
        object.end(into: &bytes)
        return true
    }

    /// As `WireParticipant.encode(to:)` writes it.
    private static func participant(_ participant: WireParticipant, into bytes: inout JSONOutput) {
        var object = ObjectWriter()
        object.member("participantId", participant.participantId, into: &bytes, string)
        object.member("userIdentity", participant.userIdentity, into: &bytes, identity)
        object.member("type", WireSpelling.participantType(participant.role), into: &bytes, string)
        object.member("permission", WireSpelling.permission(participant.permission), into: &bytes, string)
        object.member("acceptanceStatus", WireSpelling.acceptanceStatus(participant.acceptance), into: &bytes, string)
        object.end(into: &bytes)
    }

    private static func identity(_ identity: WireUserIdentity, into bytes: inout JSONOutput) {
        var object = ObjectWriter()
        object.member("userRecordName", identity.userRecordName, into: &bytes, string)
        object.member("nameComponents", identity.nameComponents, into: &bytes) { name, bytes in
            var nameObject = ObjectWriter()
            nameObject.member("givenName", name.givenName, into: &bytes, string)
            nameObject.member("familyName", name.familyName, into: &bytes, string)
            nameObject.end(into: &bytes)
        }
        object.member("lookupInfo", identity.lookupInfo, into: &bytes) { info, bytes in
            var infoObject = ObjectWriter()
            infoObject.member("emailAddress", info.emailAddress, into: &bytes, string)
            infoObject.member("phoneNumber", info.phoneNumber, into: &bytes, string)
            infoObject.member("userRecordName", info.userRecordName, into: &bytes, string)
            infoObject.end(into: &bytes)
        }
        object.end(into: &bytes)
    }

    private static func pointer(_ pointer: WireRecordPointer, into bytes: inout JSONOutput) {
        var object = ObjectWriter()
        object.member("recordName", pointer.recordName, into: &bytes, string)
        object.member("recordChangeTag", pointer.recordChangeTag, into: &bytes, string)
        object.end(into: &bytes)
    }

    static func zone(_ zoneID: WireZoneID, into bytes: inout JSONOutput) {
        let (zone, type) = zoneID.written
        var object = ObjectWriter()
        object.member("zoneName", zone.zoneName, into: &bytes, string)
        object.member("ownerRecordName", zone.ownerRecordName, into: &bytes, string)
        object.member("zoneType", type, into: &bytes, string)
        object.end(into: &bytes)
    }

    private static func stamp(_ stamp: WireStamp, into bytes: inout JSONOutput) {
        var object = ObjectWriter()
        object.member("timestamp", stamp.timestamp, into: &bytes, integer)
        object.member("userRecordName", stamp.userRecordName, into: &bytes, string)
        object.member("deviceID", stamp.deviceID, into: &bytes, string)
        object.end(into: &bytes)
    }
}
