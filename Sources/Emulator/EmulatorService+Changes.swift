import Foundation
import CloudKitWire
import Hummingbird
import ShareKit

/// Record queries and change feeds with the keys Apple's reference gives them: `desiredKeys`,
/// `desiredRecordTypes`, `numbersAsStrings`, `reverse`, `zoneWide`.
extension EmulatorService {
    /// `records/query`: one zone, or with `zoneWide` and no `zoneID` every zone of the database the caller
    /// sees, sorted together. A zone-wide page's marker is the number of records handed out so far (`w200`).
    func query(_ request: QueryRecordsRequest, store: any Store, database: DatabaseScope, as user: UserRecordName)
        async throws -> ByteBuffer
    {
        var query = try request.recordQuery()
        query.continuationMarker = query.continuationMarker.map(OpaqueText.read)
        let limit = min(query.resultsLimit ?? CloudKitLimits.recordsPerResponse, CloudKitLimits.recordsPerResponse)
        query.resultsLimit = limit
        func answer(_ records: [Record], marker: String?) throws -> ByteBuffer {
            try encode(
                RecordsAnswer(
                    records.map(RecordOutcome.saved), currentUser: user, desiredKeys: request.desiredKeys,
                    numbersAsStrings: request.numbersAsStrings, continuationMarker: marker.map(OpaqueText.written)))
        }
        if configuration.indexLag > 0 {
            return try await lagging(query, request: request, store: store, database: database, as: user)
        }
        guard request.zoneID == nil, request.zoneWide == true else {
            // One zone's page, written as the store reads it.
            let answer = RecordsAnswerWriter(
                currentUser: user, desiredKeys: request.desiredKeys, numbersAsStrings: request.numbersAsStrings,
                capacity: limit * 400)
            let marker = try await store.queryRecords(
                query, in: request.zoneID?.zoneID ?? .defaultZone, database: database, as: user, into: answer)
            return try encode(answer, continuationMarker: marker.map(OpaqueText.written))
        }
        var offset = 0
        if let marker = query.continuationMarker {
            guard marker.hasPrefix("w"), let start = Int(marker.dropFirst()), start >= 0 else {
                throw ShareError(.badRequest, "the continuation marker '\(marker)' was not handed out by this server")
            }
            offset = start
        }
        var found: [Record] = []
        for zone in try await store.listZones(in: database, as: user) {
            var zoneQuery = query
            zoneQuery.resultsLimit = CloudKitLimits.recordsPerResponse
            zoneQuery.continuationMarker = nil
            repeat {
                let page: QueryPage
                do {
                    page = try await store.queryRecords(zoneQuery, in: zone.zoneID, database: database, as: user)
                } catch let error as ShareError where error.code == .accessDenied || error.code == .zoneNotFound {
                    break  // a zone the caller sees but may not query (nothing in it shared) adds nothing
                }
                found += page.records
                zoneQuery.continuationMarker = page.continuationMarker
            } while zoneQuery.continuationMarker != nil
        }
        found.sort { QueryEvaluation.ordered($0, $1, by: query.sort) }
        let page = Array(found.dropFirst(offset).prefix(limit))
        let next = offset + page.count
        return try answer(page, marker: next < found.count ? "w\(next)" : nil)
    }

    /// A query as an index that lags `configuration.indexLag` behind the writes answers it (`serve
    /// --index-lag`): a record written less than that long ago is not found yet. The index keeps no earlier
    /// versions, so a record changed within the lag is not found until the index catches up; lookups by name
    /// and the change feeds are not delayed.
    private func lagging(
        _ query: RecordQuery, request: QueryRecordsRequest, store: any Store, database: DatabaseScope,
        as user: UserRecordName
    ) async throws -> ByteBuffer {
        let cutoff = Int64((Date().timeIntervalSince1970 - configuration.indexLag) * 1000)
        var zoneQuery = query
        zoneQuery.resultsLimit = CloudKitLimits.recordsPerResponse
        let zones =
            request.zoneID == nil && request.zoneWide == true
            ? try await store.listZones(in: database, as: user).map(\.zoneID) : [request.zoneID?.zoneID ?? .defaultZone]
        var found: [Record] = []
        for zone in zones {
            zoneQuery.continuationMarker = nil
            repeat {
                let page: QueryPage
                do {
                    page = try await store.queryRecords(zoneQuery, in: zone, database: database, as: user)
                } catch let error as ShareError
                    where zones.count > 1 && [.accessDenied, .zoneNotFound].contains(error.code)
                {
                    break
                }
                found += page.records.filter { ($0.modified?.timestamp ?? 0) <= cutoff }
                zoneQuery.continuationMarker = page.continuationMarker
            } while zoneQuery.continuationMarker != nil
        }
        found.sort { QueryEvaluation.ordered($0, $1, by: query.sort) }
        let limit = query.resultsLimit ?? CloudKitLimits.recordsPerResponse
        let offset = query.continuationMarker.flatMap { Int($0.dropFirst()) } ?? 0
        let page = Array(found.dropFirst(offset).prefix(limit))
        let next = offset + page.count
        return try encode(
            RecordsAnswer(
                page.map(RecordOutcome.saved), currentUser: user, desiredKeys: request.desiredKeys,
                numbersAsStrings: request.numbersAsStrings,
                continuationMarker: next < found.count ? OpaqueText.written("w\(next)") : nil))
    }

    /// `changes/zone`: each zone's own keys override the request's. A zone's records are written as the store
    /// reads them (`RecordsAnswerWriter`), unless the request filters them by type or reverses them: an apply
    /// over `http:` reads its zones' tags back so, 10,000 records with no field, and making each a `Record`
    /// and a `WireRecord` only to leave their fields out was most of serve's time answering.
    func zoneChanges(_ request: ZoneChangesRequest, store: any Store, database: DatabaseScope, as user: UserRecordName)
        async throws -> ZoneChangesAnswer
    {
        var zones: [ZoneChangesAnswer.Zone] = []
        for zone in request.zones {
            let zoneID = zone.zoneID.zoneID
            let since = zone.syncToken.map { ChangeToken(rawValue: OpaqueText.read($0)) }
            let resultsLimit = min(
                zone.resultsLimit ?? request.resultsLimit ?? CloudKitLimits.recordsPerResponse,
                CloudKitLimits.recordsPerResponse)
            let desiredKeys = zone.desiredKeys ?? request.desiredKeys
            let desiredRecordTypes = zone.desiredRecordTypes ?? request.desiredRecordTypes
            let reverse = zone.reverse ?? request.reverse
            let numbersAsStrings = zone.numbersAsStrings ?? request.numbersAsStrings
            do {
                guard desiredRecordTypes != nil || reverse == true else {
                    let records = RecordsAnswerWriter(
                        currentUser: user, desiredKeys: desiredKeys, numbersAsStrings: numbersAsStrings,
                        capacity: resultsLimit * 300)
                    let changes = try await store.zoneChanges(
                        zoneID, in: database, since: since, resultsLimit: resultsLimit, as: user, into: records)
                    // After the records, as `ZoneChangesResponse.ZoneResult` orders them.
                    for share in changes.changedShares { try records.receive(.savedShare(share), at: records.count) }
                    for name in changes.deletedRecordNames {
                        try records.receive(.deleted(recordName: name), at: records.count)
                    }
                    zones.append(
                        .written(
                            changes.zoneID, records: records, syncToken: OpaqueText.written(changes.token.rawValue),
                            moreComing: changes.moreComing))
                    continue
                }
                let changes = try await store.zoneChanges(
                    zoneID, in: database, since: since, resultsLimit: resultsLimit, as: user)
                var result = ZoneChangesResponse.ZoneResult(changes, currentUser: user)
                result.syncToken = result.syncToken.map(OpaqueText.written)
                result.records = shaped(
                    result.records ?? [], desiredKeys: desiredKeys, desiredRecordTypes: desiredRecordTypes,
                    reverse: reverse, numbersAsStrings: numbersAsStrings)
                zones.append(.result(result))
            } catch let error as ShareError {
                zones.append(.result(.init(zoneID: zoneID, error: error)))
            }
        }
        return ZoneChangesAnswer(zones: zones)
    }

    /// `records/changes`: one custom zone's changes, as `changes/zone` answers them.
    func recordChanges(
        _ request: RecordChangesRequest, store: any Store, database: DatabaseScope, as user: UserRecordName
    ) async throws -> RecordChangesResponse {
        let zoneID = request.zoneID.zoneID
        guard zoneID.zoneName != defaultZoneName else {
            throw ShareError(
                .badRequest,
                "records/changes is served for custom zones only; read the default zone with records/query",
                subject: zoneID.zoneName)
        }
        let changes = try await store.zoneChanges(
            zoneID, in: database, since: request.syncToken.map { ChangeToken(rawValue: OpaqueText.read($0)) },
            resultsLimit: min(
                request.resultsLimit ?? CloudKitLimits.recordsPerResponse, CloudKitLimits.recordsPerResponse),
            as: user)
        let result = ZoneChangesResponse.ZoneResult(changes, currentUser: user)
        return RecordChangesResponse(
            zoneID: result.zoneID,
            records: shaped(
                result.records ?? [], desiredKeys: request.desiredKeys, desiredRecordTypes: nil, reverse: nil,
                numbersAsStrings: request.numbersAsStrings),
            syncToken: OpaqueText.written(changes.token.rawValue), moreComing: changes.moreComing, reverse: false)
    }

    /// The records of a change feed page as the request asks for them. A deletion (`deleted: true`, no type)
    /// is kept whatever `desiredRecordTypes` says: the feed cannot tell its type, and a client must hear of it.
    private func shaped(
        _ records: [WireRecord], desiredKeys: [String]?, desiredRecordTypes: [String]?, reverse: Bool?,
        numbersAsStrings: Bool?
    ) -> [WireRecord] {
        var shaped = records.filter { record in
            guard let types = desiredRecordTypes, record.deleted != true else { return true }
            return record.recordType.map(types.contains) ?? true
        }
        .map { $0.answering(desiredKeys: desiredKeys, numbersAsStrings: numbersAsStrings) }
        if reverse == true { shaped.reverse() }
        return shaped
    }
}
