import ShareKit

/// `records/resolve` and `records/accept`: `{shortGUIDs: [{value}]}`.
package struct ShortGUIDsRequest: Codable, Sendable, Hashable {
    package struct ShortGUID: Codable, Sendable, Hashable {
        package var value: String
        package var shouldFetchRootRecord: Bool?
    }

    package var shortGUIDs: [ShortGUID]

    package init(_ values: [String]) {
        shortGUIDs = values.map { ShortGUID(value: $0) }
    }
}

/// One result of `records/resolve` or `records/accept`: what a share URL leads to, or an error.
///
/// `{shortGUID, zoneID, rootRecordName?, share, participantType?, participantPermission?,
/// participantStatus?}`; the caller's own participant entry is the share's `currentUserParticipant`.
package struct WireShareMetadata: Codable, Sendable, Hashable {
    package var shortGUID: String?
    package var zoneID: WireZoneID?
    package var rootRecordName: String?
    package var share: WireRecord?
    package var ownerIdentity: WireUserIdentity?
    package var participantType: String?
    package var participantPermission: String?
    package var participantStatus: String?
    package var serverErrorCode: String?
    package var reason: String?

    /// No members: what a reader fills in.
    package init() {}

    package init(_ metadata: ShareMetadata, shortGUID: String?) {
        self.shortGUID = shortGUID
        zoneID = WireZoneID(metadata.zoneID)
        rootRecordName = metadata.rootRecordName
        var share = WireRecord(metadata.share)
        share.currentUserParticipant = metadata.participant.map(WireParticipant.init)
        self.share = share
        ownerIdentity = WireUserIdentity(userRecordName: metadata.share.ownerRecordName, email: nil, name: nil)
        participantType = metadata.participant.map { WireSpelling.participantType($0.role) }
        participantPermission = metadata.participant.map { WireSpelling.permission($0.permission) }
        participantStatus = metadata.participant.map { WireSpelling.acceptanceStatus($0.acceptance) }
    }

    package init(shortGUID: String, error: ShareError) {
        self.shortGUID = shortGUID
        serverErrorCode = error.code.rawValue
        reason = error.reason
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
            rootRecordName: rootRecordName, participant: share.currentUserParticipant?.participant)
    }
}

/// The answer to `records/resolve` and `records/accept`: `{results}`.
package struct ShareResultsResponse: Codable, Sendable, Hashable {
    package var results: [WireShareMetadata]

    package init(results: [WireShareMetadata]) {
        self.results = results
    }
}
