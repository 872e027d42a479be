import ShareKit

/// A zone on the wire: `{zoneID, share?, deleted?}`, or a per-zone error.
public struct WireZone: Codable, Sendable, Hashable {
    public var zoneID: WireZoneID?
    public var share: WireShareReference?
    public var deleted: Bool?
    public var serverErrorCode: String?
    public var reason: String?
    public var uuid: String?

    public init(_ zone: Zone) {
        zoneID = WireZoneID(zone.zoneID)
        share = zone.shareRecordName.map { WireShareReference(recordName: $0, zoneID: zone.zoneID) }
    }

    public init(zoneID: ZoneID, deleted: Bool? = nil) {
        self.zoneID = WireZoneID(zoneID)
        self.deleted = deleted
    }

    public init(zoneID: ZoneID?, error: ShareError) {
        self.zoneID = zoneID.map(WireZoneID.init)
        serverErrorCode = error.code.rawValue
        reason = error.reason
        uuid = WireError.newUUID()
    }

    /// The zone, or the error this entry carries.
    public var result: Result<Zone, ShareError> {
        if let serverErrorCode {
            return .failure(
                WireError.shareError(
                    code: serverErrorCode, reason: reason, subject: zoneID.map { "zone \($0.zoneName)" },
                    retryAfter: nil))
        }
        guard let zoneID else {
            return .failure(ShareError(.internalError, "a zone entry in the response has no zoneID"))
        }
        return .success(Zone(zoneID: zoneID.zoneID, shareRecordName: share?.recordName))
    }
}

/// `zones/lookup`: `{zones: [zoneID]}`.
public struct LookupZonesRequest: Codable, Sendable, Hashable {
    public var zones: [WireZoneID]

    public init(_ zoneIDs: [ZoneID]) {
        zones = zoneIDs.map(WireZoneID.init)
    }
}

/// `zones/modify`: `{operations: [{operationType: create|delete, zone: {zoneID}}]}`.
public struct ModifyZonesRequest: Codable, Sendable, Hashable {
    public struct Operation: Codable, Sendable, Hashable {
        public var operationType: String
        public var zone: ZoneBody
    }

    public struct ZoneBody: Codable, Sendable, Hashable {
        public var zoneID: WireZoneID
    }

    public var operations: [Operation]

    public init(_ operations: [ZoneOperation]) {
        self.operations = operations.map {
            Operation(operationType: $0.kind.rawValue, zone: ZoneBody(zoneID: WireZoneID($0.zoneID)))
        }
    }
}

/// The answer to the zone requests: `{zones}`.
public struct ZonesResponse: Codable, Sendable, Hashable {
    public var zones: [WireZone]

    public init(zones: [WireZone]) {
        self.zones = zones
    }
}
