import ShareKit

/// `records/resolve` and `records/accept`: `{shortGUIDs: [{value}]}`.
package struct ShortGUIDsRequest: Codable, Sendable, Hashable {
    package struct ShortGUID: Codable, Sendable, Hashable {
        package var value: String
        package var shouldFetchRootRecord: Bool?
        /// The root record's fields to answer (all when nil).
        package var rootRecordDesiredKeys: [String]?
    }

    package var shortGUIDs: [ShortGUID]

    package init(_ values: [String]) {
        shortGUIDs = values.map { ShortGUID(value: $0) }
    }
}

/// One result of `records/resolve` or `records/accept`: the reference's ShortGUID Result Dictionary, or its
/// ShortGUID Fetch Error Dictionary.
///
/// `{shortGUID: {value, shouldFetchRootRecord}, containerIdentifier, environment, databaseScope, zoneID,
/// rootRecordName?, rootRecord?, share, ownerIdentity, participantType?, participantPermission?,
/// participantStatus?}`; the caller's own participant entry is also the share's `currentUserParticipant`.
/// `shortGUID` is a dictionary, as the reference and the live service write it (a client that decodes it
/// strictly takes nothing else); a bare string, as serve wrote it before, is read too.
package struct WireShareMetadata: Sendable, Hashable {
    package var shortGUID: String?
    /// Whether the request asked for the root record (`shortGUIDs[].shouldFetchRootRecord`), written back in
    /// the result's `shortGUID` dictionary.
    package var shouldFetchRootRecord: Bool?
    package var containerIdentifier: String?
    /// `development` or `production`.
    package var environment: String?
    /// `PRIVATE` for the share's owner, `SHARED` for anyone else.
    package var databaseScope: String?
    package var zoneID: WireZoneID?
    package var rootRecordName: String?
    package var rootRecord: WireRecord?
    package var share: WireRecord?
    package var ownerIdentity: WireUserIdentity?
    package var participantType: String?
    package var participantPermission: String?
    package var participantStatus: String?
    /// `[]` in every result captured from the live service; what it lists otherwise no document says.
    package var potentialMatchList: [WireUserIdentity]?
    package var serverErrorCode: String?
    package var reason: String?

    /// No members: what a reader fills in.
    package init() {}

    /// The result for `metadata`, as the caller sees it in `container` and `environment`; `rootRecord` when
    /// the request asked for it.
    package init(
        _ metadata: ShareMetadata, shortGUID: String?, shouldFetchRootRecord: Bool? = nil, container: String? = nil,
        environment: CloudKitEnvironment? = nil, caller: UserRecordName? = nil, rootRecord: WireRecord? = nil
    ) {
        self.shortGUID = shortGUID
        self.shouldFetchRootRecord = shouldFetchRootRecord
        containerIdentifier = container
        self.environment = environment.map(WireSpelling.environment)
        if let caller {
            databaseScope = WireSpelling.metadataDatabaseScope(
                caller == metadata.share.ownerRecordName ? .private : .shared)
        }
        // Every zone ID of the result names the share's owner, whoever resolves it: the store reads the root
        // record and the share as the owner, in the owner's own zone.
        let owner = metadata.share.ownerRecordName
        zoneID = WireZoneID(metadata.zoneID).owned(by: owner)
        rootRecordName = metadata.rootRecordName
        // The root record carries the share's short GUID, as the live service answers it.
        self.rootRecord = rootRecord.map { root in
            var root = root.inZoneOf(owner)
            root.shortGUID = root.shortGUID ?? metadata.share.shortGUID
            return root.asAnswered()
        }
        // The share lists its owner among its participants, as the live service answers it; the owner's
        // identity is whole (record name, name components, lookup info) where the store knows it.
        var share = WireRecord(metadata.share, listingOwner: true).inZoneOf(owner)
        if let owner = metadata.owner.map(WireParticipant.init(identified:)) {
            share.owner = owner
            share.participants = [owner] + (share.participants ?? []).filter { $0.role != .owner }
        }
        share.currentUserParticipant = metadata.participant.map { participant in
            participant.role == .owner ? WireParticipant(identified: participant) : WireParticipant(participant)
        }
        self.share = share.asAnswered()
        ownerIdentity =
            share.owner?.userIdentity
            ?? WireUserIdentity(userRecordName: metadata.share.ownerRecordName, email: nil, name: nil)
        participantType = metadata.participant.map { WireSpelling.participantType($0.role) }
        participantPermission = metadata.participant.map { WireSpelling.permission($0.permission) }
        participantStatus = metadata.participant.map { WireSpelling.acceptanceStatus($0.acceptance) }
        potentialMatchList = []
    }

    package init(shortGUID: String, error: ShareError) {
        self.shortGUID = shortGUID
        serverErrorCode = WireSpelling.errorCode(error.code)
        reason = WireSpelling.reason(of: error)
    }

    /// The metadata, or the error this result carries.
    package func metadata() throws -> ShareMetadata {
        if let serverErrorCode {
            throw WireError.shareError(
                code: serverErrorCode, reason: reason, subject: shortGUID.map { "share \($0)" }, retryAfter: nil)
        }
        guard let share, let zoneID else {
            throw ShareError(.internalError, "a share result in the response has no share or zoneID")
        }
        let zone = zoneID.zoneID
        return ShareMetadata(
            share: try share.shareValue(in: share.zoneID?.zoneID ?? zone), zoneID: zone,
            rootRecordName: rootRecordName, participant: share.currentUserParticipant?.participant,
            owner: share.owner.flatMap { $0.userIdentity.lookupInfo == nil ? nil : $0.participant })
    }
}

// MARK: - Codable

extension WireShareMetadata: Codable {
    private enum CodingKeys: String, CodingKey {
        case shortGUID, containerIdentifier, environment, databaseScope, zoneID, rootRecordName, rootRecord, share
        case ownerIdentity, participantType, participantPermission, participantStatus, potentialMatchList
        case serverErrorCode, reason
    }

    private struct ShortGUIDDictionary: Codable {
        var value: String
        var shouldFetchRootRecord: Bool?
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let dictionary = try? container.decodeIfPresent(ShortGUIDDictionary.self, forKey: .shortGUID) {
            shortGUID = dictionary.value
            shouldFetchRootRecord = dictionary.shouldFetchRootRecord
        } else {
            shortGUID = try container.decodeIfPresent(String.self, forKey: .shortGUID)
        }
        containerIdentifier = try container.decodeIfPresent(String.self, forKey: .containerIdentifier)
        environment = try container.decodeIfPresent(String.self, forKey: .environment)
        databaseScope = try container.decodeIfPresent(String.self, forKey: .databaseScope)
        zoneID = try container.decodeIfPresent(WireZoneID.self, forKey: .zoneID)
        rootRecordName = try container.decodeIfPresent(String.self, forKey: .rootRecordName)
        rootRecord = try container.decodeIfPresent(WireRecord.self, forKey: .rootRecord)
        share = try container.decodeIfPresent(WireRecord.self, forKey: .share)
        ownerIdentity = try container.decodeIfPresent(WireUserIdentity.self, forKey: .ownerIdentity)
        participantType = try container.decodeIfPresent(String.self, forKey: .participantType)
        participantPermission = try container.decodeIfPresent(String.self, forKey: .participantPermission)
        participantStatus = try container.decodeIfPresent(String.self, forKey: .participantStatus)
        potentialMatchList = try container.decodeIfPresent([WireUserIdentity].self, forKey: .potentialMatchList)
        serverErrorCode = try container.decodeIfPresent(String.self, forKey: .serverErrorCode)
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if let shortGUID {
            try container.encode(
                ShortGUIDDictionary(value: shortGUID, shouldFetchRootRecord: shouldFetchRootRecord), forKey: .shortGUID)
        }
        try container.encodeIfPresent(containerIdentifier, forKey: .containerIdentifier)
        try container.encodeIfPresent(environment, forKey: .environment)
        try container.encodeIfPresent(databaseScope, forKey: .databaseScope)
        try container.encodeIfPresent(zoneID, forKey: .zoneID)
        try container.encodeIfPresent(rootRecordName, forKey: .rootRecordName)
        try container.encodeIfPresent(rootRecord, forKey: .rootRecord)
        try container.encodeIfPresent(share, forKey: .share)
        try container.encodeIfPresent(ownerIdentity, forKey: .ownerIdentity)
        try container.encodeIfPresent(participantType, forKey: .participantType)
        try container.encodeIfPresent(participantPermission, forKey: .participantPermission)
        try container.encodeIfPresent(participantStatus, forKey: .participantStatus)
        try container.encodeIfPresent(potentialMatchList, forKey: .potentialMatchList)
        try container.encodeIfPresent(serverErrorCode, forKey: .serverErrorCode)
        try container.encodeIfPresent(reason, forKey: .reason)
    }
}

/// The answer to `records/resolve` and `records/accept`: `{results}`.
package struct ShareResultsResponse: Codable, Sendable, Hashable {
    package var results: [WireShareMetadata]

    package init(results: [WireShareMetadata]) {
        self.results = results
    }
}

extension WireRecord {
    /// The record with its zone and its share's zone named as `owner`'s where they say "my own zone".
    fileprivate func inZoneOf(_ owner: UserRecordName) -> WireRecord {
        var record = self
        record.zoneID = zoneID?.owned(by: owner)
        record.share?.zoneID = share?.zoneID?.owned(by: owner)
        return record
    }
}
