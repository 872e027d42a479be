import ShareKit

/// `records/resolve` and `records/accept`: `{shortGUIDs: [{value}]}`.
public struct ShortGUIDsRequest: Codable, Sendable, Hashable {
    public struct ShortGUID: Codable, Sendable, Hashable {
        public var value: String
        public var shouldFetchRootRecord: Bool?
    }

    public var shortGUIDs: [ShortGUID]

    public init(_ values: [String]) {
        shortGUIDs = values.map { ShortGUID(value: $0) }
    }

    /// The short GUID in a share URL (`https://www.icloud.com/share/0abc…#Title` → `0abc…`); a bare
    /// short GUID stays as it is.
    public static func shortGUID(fromURL url: String) -> String {
        var text = url
        if let cut = text.firstIndex(where: { $0 == "#" || $0 == "?" }) { text = String(text[..<cut]) }
        guard text.contains("://") else { return text }
        return text.split(separator: "/").last.map(String.init) ?? text
    }
}

/// One result of `records/resolve` or `records/accept`: what a share URL leads to, or an error.
///
/// `{shortGUID, zoneID, rootRecordName?, share, participantType?, participantPermission?,
/// participantStatus?}`; the caller's own participant entry is the share's `currentUserParticipant`.
public struct WireShareMetadata: Codable, Sendable, Hashable {
    public var shortGUID: String?
    public var zoneID: WireZoneID?
    public var rootRecordName: String?
    public var share: WireRecord?
    public var ownerIdentity: WireUserIdentity?
    public var participantType: String?
    public var participantPermission: String?
    public var participantStatus: String?
    public var serverErrorCode: String?
    public var reason: String?

    public init(_ metadata: ShareMetadata, shortGUID: String?) {
        self.shortGUID = shortGUID
        zoneID = WireZoneID(metadata.zoneID)
        rootRecordName = metadata.rootRecordName
        var share = WireRecord(metadata.share)
        share.currentUserParticipant = metadata.participant.map(WireParticipant.init)
        self.share = share
        ownerIdentity = WireUserIdentity(userRecordName: metadata.share.ownerRecordName, email: nil, name: nil)
        participantType = metadata.participant.map { WireSpelling.participantType($0.role) }
        participantPermission = metadata.participant?.permission.rawValue
        participantStatus = metadata.participant.map { WireSpelling.acceptanceStatus($0.acceptance) }
    }

    public init(shortGUID: String, error: ShareError) {
        self.shortGUID = shortGUID
        serverErrorCode = error.code.rawValue
        reason = error.reason
    }

    /// The metadata, or the error this result carries.
    public func metadata() throws -> ShareMetadata {
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
public struct ShareResultsResponse: Codable, Sendable, Hashable {
    public var results: [WireShareMetadata]

    public init(results: [WireShareMetadata]) {
        self.results = results
    }
}
