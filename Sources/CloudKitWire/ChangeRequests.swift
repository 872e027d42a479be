import ShareKit

/// `changes/database`: `{syncToken?, resultsLimit?}`.
package struct DatabaseChangesRequest: Codable, Sendable, Hashable {
    package var syncToken: String?
    package var resultsLimit: Int?

    package init(syncToken: String?, resultsLimit: Int? = nil) {
        self.syncToken = syncToken
        self.resultsLimit = resultsLimit
    }
}

/// The answer to `changes/database`: `{zones: [{zoneID, deleted?}], syncToken, moreComing}`.
package struct DatabaseChangesResponse: Codable, Sendable, Hashable {
    package var zones: [WireZone]
    package var syncToken: String
    package var moreComing: Bool

    package init(_ changes: DatabaseChanges) {
        zones =
            changes.changedZones.map { WireZone(zoneID: $0) }
            + changes.deletedZones.map { WireZone(zoneID: $0, deleted: true) }
        syncToken = changes.token.rawValue
        moreComing = changes.moreComing
    }

    package var changes: DatabaseChanges {
        DatabaseChanges(
            changedZones: zones.filter { $0.deleted != true }.compactMap { $0.zoneID?.zoneID },
            deletedZones: zones.filter { $0.deleted == true }.compactMap { $0.zoneID?.zoneID },
            token: ChangeToken(rawValue: syncToken), moreComing: moreComing)
    }
}

/// `changes/zone`: `{zones: [{zoneID, syncToken?, desiredKeys?, desiredRecordTypes?, resultsLimit?, reverse?,
/// numbersAsStrings?}], desiredKeys?, desiredRecordTypes?, resultsLimit?, reverse?, numbersAsStrings?}`: a
/// zone's own key overrides the request's, as Apple's reference says.
package struct ZoneChangesRequest: Codable, Sendable, Hashable {
    package struct ZoneRequest: Codable, Sendable, Hashable {
        package var zoneID: WireZoneID
        package var syncToken: String?
        package var desiredKeys: [String]?
        package var desiredRecordTypes: [String]?
        package var resultsLimit: Int?
        package var reverse: Bool?
        package var numbersAsStrings: Bool?
    }

    package var zones: [ZoneRequest]
    package var desiredKeys: [String]?
    package var desiredRecordTypes: [String]?
    package var resultsLimit: Int?
    package var reverse: Bool?
    package var numbersAsStrings: Bool?

    package init(zoneID: ZoneID, syncToken: String?, resultsLimit: Int?) {
        zones = [ZoneRequest(zoneID: WireZoneID(zoneID), syncToken: syncToken, resultsLimit: resultsLimit)]
    }

    /// Several zones' reads in one request (`ZoneFeedBatches`).
    package init(zones: [ZoneRequest]) {
        self.zones = zones
    }
}

/// `records/changes` (private and shared databases, custom zones): `{zoneID, syncToken?, resultsLimit?,
/// desiredKeys?, numbersAsStrings?}`, Apple's older form of `changes/zone` for one zone.
package struct RecordChangesRequest: Codable, Sendable, Hashable {
    package var zoneID: WireZoneID
    package var syncToken: String?
    package var resultsLimit: Int?
    package var desiredKeys: [String]?
    package var numbersAsStrings: Bool?
}

/// The answer to `records/changes`: `{zoneID, records, syncToken, moreComing, reverse}`, or a request error.
package struct RecordChangesResponse: Codable, Sendable, Hashable {
    package var zoneID: WireZoneID?
    package var records: [WireRecord]
    package var syncToken: String
    package var moreComing: Bool
    /// Whether the records are newest first; the reference's answer has it, and serve answers in change order.
    package var reverse: Bool?

    package init(zoneID: WireZoneID?, records: [WireRecord], syncToken: String, moreComing: Bool, reverse: Bool?) {
        self.zoneID = zoneID
        self.records = records
        self.syncToken = syncToken
        self.moreComing = moreComing
        self.reverse = reverse
    }
}

/// `zones/changes` (deprecated by Apple in favour of `changes/database`): `{metaSyncToken?}`. The live service
/// ignores a `syncToken` key here, and so does sharelane.
package struct ZonesChangesRequest: Codable, Sendable, Hashable {
    package var metaSyncToken: String?

    package init(metaSyncToken: String?) {
        self.metaSyncToken = metaSyncToken
    }
}

/// The answer to `zones/changes`: `{zones: [{zoneID, deleted?}], metaSyncToken, moreComing}`.
package struct ZonesChangesResponse: Codable, Sendable, Hashable {
    package var zones: [WireZone]
    package var metaSyncToken: String
    package var moreComing: Bool

    package init(_ changes: DatabaseChanges) {
        let answer = DatabaseChangesResponse(changes)
        zones = answer.zones
        metaSyncToken = answer.syncToken
        moreComing = answer.moreComing
    }
}

/// The answer to `changes/zone`: per zone `{zoneID, records, syncToken, moreComing}`, or a per-zone error.
///
/// Changed records and shares are written as records (shares as `cloudkit.share`), deletions as
/// `{recordName, deleted: true}`.
package struct ZoneChangesResponse: Codable, Sendable, Hashable {
    package struct ZoneResult: Codable, Sendable, Hashable {
        package var zoneID: WireZoneID?
        package var records: [WireRecord]?
        package var syncToken: String?
        package var moreComing: Bool?
        package var serverErrorCode: String?
        package var reason: String?

        /// An entry with no member, for a reader to fill.
        package init() {}

        package init(_ changes: ZoneChanges, currentUser: UserRecordName?) {
            zoneID = WireZoneID(changes.zoneID)
            records =
                changes.changedRecords.map { WireRecord($0).asAnswered() }
                + changes.changedShares.map {
                    WireRecord($0, currentUser: currentUser, listingOwner: true).asAnswered()
                }
                + changes.deletedRecordNames.map { WireRecord(deletedRecordName: $0) }
            syncToken = changes.token.rawValue
            moreComing = changes.moreComing
        }

        package init(zoneID: ZoneID, error: ShareError) {
            self.zoneID = WireZoneID(zoneID)
            serverErrorCode = WireSpelling.errorCode(error.code)
            reason = WireSpelling.reason(of: error)
        }

        /// The changes, or the error this entry carries.
        package func changes(in requested: ZoneID) throws -> ZoneChanges {
            if let serverErrorCode {
                throw WireError.shareError(
                    code: serverErrorCode, reason: reason, subject: "zone \(requested.zoneName)", retryAfter: nil)
            }
            let zone = zoneID?.zoneID ?? requested
            var changed: [Record] = []
            var shares: [Share] = []
            var deleted: [String] = []
            for entry in records ?? [] {
                if entry.deleted == true {
                    deleted.append(entry.recordName ?? "")
                } else if entry.isShare {
                    shares.append(try entry.shareValue(in: zone))
                } else {
                    changed.append(entry.record(in: zone))
                }
            }
            return ZoneChanges(
                zoneID: zone, changedRecords: changed, changedShares: shares, deletedRecordNames: deleted,
                token: ChangeToken(rawValue: syncToken ?? ""), moreComing: moreComing ?? false)
        }
    }

    package var zones: [ZoneResult]

    package init(zones: [ZoneResult]) {
        self.zones = zones
    }
}
