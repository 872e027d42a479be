import ShareKit

/// One entry of a `records` array: a record, a share (a record of type `cloudkit.share`), a deletion
/// (`deleted: true`) or a per-record error (`serverErrorCode`).
///
/// Web Services uses one dictionary shape for all four, so this is one struct with optional members; the
/// conversions below pick the meaning.
package struct WireRecord: Codable, Sendable, Hashable {
    package var recordName: String?
    /// Optional when reading (Apple's examples of deletes and errors leave it out); always written for
    /// records and shares.
    package var recordType: String?
    package var recordChangeTag: String?
    package var fields: [String: WireField]?
    package var parent: WireRecordPointer?
    package var share: WireShareReference?
    package var zoneID: WireZoneID?
    package var created: WireStamp?
    package var modified: WireStamp?
    package var deleted: Bool?
    /// `{}` on every record the live service answers (captures show no other value); nil in requests.
    package var pluginFields: WirePluginFields?
    package var createShortGUID: Bool?

    // Share members.
    package var forRecord: WireRecordPointer?
    package var publicPermission: String?
    package var participants: [WireParticipant]?
    package var owner: WireParticipant?
    package var currentUserParticipant: WireParticipant?
    package var shortGUID: String?
    /// The share's URL. An extension of sharelane's emulator; Apple derives it from `shortGUID`.
    package var url: String?

    // Error members: `{recordName, serverErrorCode, reason, retryAfter?}`, with no `uuid` (the live service's
    // per-record errors carry none; its request-level error does, `WireError`).
    package var serverErrorCode: String?
    package var reason: String?
    package var retryAfter: Double?

    package init(recordName: String? = nil, recordType: String? = nil) {
        self.recordName = recordName
        self.recordType = recordType
    }

    /// A record as it is written in a request or a response.
    package init(_ record: Record, includeZoneID: Bool = true) {
        recordName = record.recordName
        recordType = record.recordType
        recordChangeTag = record.changeTag
        fields = record.fields.mapValues(WireField.init)
        parent = record.parent.map { WireRecordPointer(recordName: $0) }
        share = record.shareRecordName.map { WireShareReference(recordName: $0, zoneID: record.zoneID) }
        zoneID = includeZoneID ? WireZoneID(record.zoneID) : nil
        created = record.created.map { WireStamp($0) }
        modified = record.modified.map { WireStamp($0) }
    }

    /// A share as a `cloudkit.share` record.
    ///
    /// - Parameters:
    ///   - currentUser: the caller, whose own participant entry goes in `currentUserParticipant`.
    ///   - listingOwner: the owner leads `participants` (type `OWNER`, accepted, read-write), as CloudKit
    ///     answers a share (native `CKShare.participants` includes the owner too). Answers list it; requests
    ///     name the invitees only, and a share read back drops the entry (`shareValue`).
    package init(
        _ share: Share, includeZoneID: Bool = true, currentUser: UserRecordName? = nil, listingOwner: Bool = false
    ) {
        recordName = share.recordName
        recordType = shareRecordType
        recordChangeTag = share.changeTag
        fields = share.title.map { [shareTitleField: WireField(.string($0))] } ?? [:]
        zoneID = includeZoneID ? WireZoneID(share.zoneID) : nil
        forRecord = share.rootRecordName.map { WireRecordPointer(recordName: $0) }
        publicPermission = WireSpelling.permission(share.publicPermission)
        owner = WireParticipant(owner: share.ownerRecordName)
        let invitees = share.participants.filter { $0.role != .owner }.map { WireParticipant($0) }
        participants = listingOwner ? (owner.map { [$0] } ?? []) + invitees : invitees
        currentUserParticipant = currentUser.flatMap { share.participant($0) }.map { WireParticipant($0) }
        shortGUID = share.shortGUID
        url = share.url
        created = share.created.map { WireStamp($0) }
        modified = share.modified.map { WireStamp($0) }
    }

    /// An operation's outcome, as a response reports it.
    ///
    /// - Parameter currentUser: the caller, whose own participant entry a share's answer carries.
    package init(_ outcome: RecordOutcome, currentUser: UserRecordName) {
        switch outcome {
        case .saved(let record): self.init(record)
        case .savedShare(let share): self.init(share, currentUser: currentUser, listingOwner: true)
        case .deleted(let name): self.init(deletedRecordName: name)
        case .failed(let name, let error): self.init(recordName: name, error: error)
        }
    }

    /// The entry as the live service answers a record or share: with `pluginFields: {}` and `deleted: false`
    /// (every captured record carries both); a deletion or an error as it is.
    package func asAnswered() -> WireRecord {
        guard recordType != nil, serverErrorCode == nil, deleted != true else { return self }
        var record = self
        record.pluginFields = WirePluginFields()
        record.deleted = false
        return record
    }

    /// A deletion, as a response reports it.
    package init(deletedRecordName: String) {
        recordName = deletedRecordName
        deleted = true
    }

    /// A per-record error.
    package init(recordName: String?, error: ShareError) {
        self.recordName = recordName
        serverErrorCode = WireSpelling.errorCode(error.code)
        reason = WireSpelling.reason(of: error)
        retryAfter = error.retryAfter
    }

    /// True for an entry of type `cloudkit.share`.
    package var isShare: Bool { recordType == shareRecordType }

    /// The record with only the fields named in `desiredKeys` (all of them when nil), as CloudKit answers a
    /// request that sets `desiredKeys`.
    package func keepingFields(_ desiredKeys: [String]?) -> WireRecord {
        guard let desiredKeys, let fields else { return self }
        var record = self
        record.fields = fields.filter { desiredKeys.contains($0.key) }
        return record
    }

    /// The record as an answer to a request's `desiredKeys` and `numbersAsStrings`.
    package func answering(desiredKeys: [String]?, numbersAsStrings: Bool?) -> WireRecord {
        var record = keepingFields(desiredKeys)
        if numbersAsStrings == true, let fields = record.fields {
            record.fields = fields.mapValues { field in
                var field = field
                field.numbersAsStrings = true
                return field
            }
        }
        return record
    }

    /// The error this entry carries, if it is an error entry.
    package func error(in zoneID: ZoneID?) -> ShareError? {
        guard let serverErrorCode else { return nil }
        let subject = recordName.map { name in zoneID.map { "\($0.zoneName)/\(name)" } ?? name }
        return WireError.shareError(code: serverErrorCode, reason: reason, subject: subject, retryAfter: retryAfter)
    }

    /// The names of the fields whose value came without a `type` (`WireField.isTyped`).
    package var untypedFieldNames: Set<String> {
        guard let fields else { return [] }
        return Set(fields.lazy.filter { !$0.value.isTyped }.map(\.key))
    }

    /// This entry as a record of `zoneID` (the entry's own zone ID wins when it has one).
    package func record(in zoneID: ZoneID) -> Record {
        Record(
            recordName: recordName ?? "", recordType: recordType ?? "",
            zoneID: self.zoneID?.zoneID ?? zoneID, fields: (fields ?? [:]).mapValues(\.value),
            parent: parent?.recordName, changeTag: recordChangeTag, created: created?.stamp, modified: modified?.stamp,
            shareRecordName: share?.recordName)
    }

    /// The `OWNER` entry of `participants`, which CloudKit lists beside the invitees.
    private var listedOwner: WireParticipant? { participants?.first { $0.role == .owner } }

    /// This entry as a share of `zoneID`. The owner's entry among `participants` (as CloudKit answers a share,
    /// and clients such as CloudKit JS send it back) is not an invitee: it is dropped, and names the owner
    /// when `owner` does not.
    package func shareValue(in zoneID: ZoneID) throws -> Share {
        let permissionWord = publicPermission ?? WireSpelling.permission(.none)
        guard let permission = WireSpelling.permission(permissionWord) else {
            throw ShareError(
                .badRequest, "unknown publicPermission \"\(permissionWord)\"; expected NONE, READ_ONLY or READ_WRITE",
                subject: recordName)
        }
        var title: String?
        if case .string(let text)? = fields?[shareTitleField]?.value { title = text }
        return Share(
            recordName: recordName ?? (forRecord == nil ? zoneShareRecordName : ""),
            zoneID: self.zoneID?.zoneID ?? zoneID,
            rootRecordName: forRecord?.recordName, title: title, publicPermission: permission,
            ownerRecordName: owner?.userIdentity.userRecordName ?? listedOwner?.userIdentity.userRecordName
                ?? defaultOwnerName,
            participants: (participants ?? []).filter { $0.role != .owner }.map(\.participant),
            changeTag: recordChangeTag,
            shortGUID: shortGUID, url: url ?? shortGUID.map { "https://www.icloud.com/share/\($0)" },
            created: created?.stamp, modified: modified?.stamp)
    }

    /// This entry as the outcome of one operation: a saved record or share, a deletion, or a failure.
    package func outcome(in zoneID: ZoneID) -> RecordOutcome {
        if let error = error(in: zoneID) {
            return .failed(recordName: recordName ?? "", error)
        }
        if deleted == true {
            return .deleted(recordName: recordName ?? "")
        }
        if isShare {
            do {
                return .savedShare(try shareValue(in: zoneID))
            } catch let error as ShareError {
                return .failed(recordName: recordName ?? "", error)
            } catch {
                return .failed(recordName: recordName ?? "", ShareError(.internalError, "\(error)"))
            }
        }
        return .saved(record(in: zoneID))
    }
}

/// A record's `pluginFields`: `{}` in every answer captured from the live service, whose contents no document
/// describes. Read as any object (its members are not kept), written as `{}`.
package struct WirePluginFields: Codable, Sendable, Hashable {
    package init() {}

    package init(from decoder: any Decoder) throws {
        _ = try decoder.container(keyedBy: AnyKey.self)
    }

    package func encode(to encoder: any Encoder) throws {
        _ = encoder.container(keyedBy: AnyKey.self)
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
