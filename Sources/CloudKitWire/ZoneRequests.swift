import ShareKit

/// A zone on the wire: `{zoneID, share?, deleted?}`, or a per-zone error, `{zoneID, serverErrorCode, reason}`
/// with no `uuid`, as the live service writes it.
package struct WireZone: Codable, Sendable, Hashable {
    package var zoneID: WireZoneID?
    /// The reference's Zone Dictionary: the current point in the zone's change history (a token
    /// `records/changes` and `changes/zone` take), and whether the zone takes atomic requests (custom zones
    /// do, the default zone does not). Answered by `zones/list`, `zones/lookup` and `zones/modify`.
    package var syncToken: String?
    package var atomic: Bool?
    package var share: WireShareReference?
    package var deleted: Bool?
    package var serverErrorCode: String?
    package var reason: String?

    package init(_ zone: Zone) {
        zoneID = WireZoneID(zone.zoneID)
        share = zone.shareRecordName.map { WireShareReference(recordName: $0, zoneID: zone.zoneID) }
    }

    package init(zoneID: ZoneID, deleted: Bool? = nil) {
        self.zoneID = WireZoneID(zoneID)
        self.deleted = deleted
    }

    package init(zoneID: ZoneID?, error: ShareError) {
        self.zoneID = zoneID.map(WireZoneID.init)
        serverErrorCode = WireSpelling.errorCode(error.code)
        reason = WireSpelling.reason(of: error)
    }

    /// The zone, or the error this entry carries.
    package var result: Result<Zone, ShareError> {
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
package struct LookupZonesRequest: Codable, Sendable, Hashable {
    package var zones: [WireZoneID]

    package init(_ zoneIDs: [ZoneID]) {
        zones = zoneIDs.map(WireZoneID.init)
    }
}

/// `zones/modify`: `{operations: [{operationType: create|delete, zone: {zoneID}}]}`.
package struct ModifyZonesRequest: Codable, Sendable, Hashable {
    package struct Operation: Codable, Sendable, Hashable {
        package var operationType: String
        package var zone: ZoneBody
    }

    package struct ZoneBody: Codable, Sendable, Hashable {
        package var zoneID: WireZoneID
    }

    package var operations: [Operation]

    package init(_ operations: [ZoneOperation]) {
        self.operations = operations.map {
            Operation(
                operationType: WireSpelling.zoneOperationType($0.kind), zone: ZoneBody(zoneID: WireZoneID($0.zoneID)))
        }
    }
}

/// The answer to the zone requests: `{zones}`.
package struct ZonesResponse: Codable, Sendable, Hashable {
    package var zones: [WireZone]

    package init(zones: [WireZone]) {
        self.zones = zones
    }
}
