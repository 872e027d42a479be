import CloudKitWire
import Foundation
import Hummingbird
import ShareKit

// `zones/list`, `zones/lookup`, `zones/modify`, `zones/changes` and `changes/database`.
extension EmulatorService {
    func listZones(_ call: OperationCall) async throws -> ByteBuffer {
        let zones = try await call.store.listZones(in: call.database, as: call.user)
        return try encode(ZonesResponse(zones: await dictionaries(zones.map(WireZone.init), call)))
    }

    func lookupZones(_ call: OperationCall) async throws -> ByteBuffer {
        let request = try decode(LookupZonesRequest.self, from: call.body)
        try checkLimit(request.zones.count, "zones")
        let zoneIDs = request.zones.map(\.zoneID)
        let results = try await call.store.lookupZones(zoneIDs, in: call.database, as: call.user)
        return try encode(ZonesResponse(zones: await dictionaries(zip(zoneIDs, results).map(wire), call)))
    }

    func modifyZones(_ call: OperationCall) async throws -> ByteBuffer {
        let request = try decode(ModifyZonesRequest.self, from: call.body)
        try checkLimit(request.operations.count, "operations")
        let operations = try request.operations.map { operation in
            guard let kind = WireSpelling.zoneOperationKind(operation.operationType) else {
                throw ShareError(
                    .badRequest, "unknown zone operationType \"\(operation.operationType)\"; expected create or delete")
            }
            return ZoneOperation(kind, operation.zone.zoneID.zoneID)
        }
        let results = try await call.store.modifyZones(operations, in: call.database, as: call.user)
        let entries = zip(operations, results).map { operation, result in
            switch (operation.kind, result) {
            // A delete is answered `{zoneID, deleted: true}`: clients written against the live service
            // (OpenCloudKit) tell a deletion from a save by that key, and find no deletion without it.
            case (.delete, .success(let zone)): WireZone(zoneID: zone.zoneID, deleted: true)
            default: wire(operation.zoneID, result)
            }
        }
        return try encode(ZonesResponse(zones: await dictionaries(entries, call)))
    }

    func zonesChanges(_ call: OperationCall) async throws -> ByteBuffer {
        let request =
            call.body.isEmpty
            ? ZonesChangesRequest(metaSyncToken: nil) : try decode(ZonesChangesRequest.self, from: call.body)
        var answer = ZonesChangesResponse(try await databaseChanges(since: request.metaSyncToken, call))
        answer.metaSyncToken = OpaqueText.written(answer.metaSyncToken)
        return try encode(answer)
    }

    func databaseChanges(_ call: OperationCall) async throws -> ByteBuffer {
        let request =
            call.body.isEmpty
            ? DatabaseChangesRequest(syncToken: nil) : try decode(DatabaseChangesRequest.self, from: call.body)
        var answer = DatabaseChangesResponse(try await databaseChanges(since: request.syncToken, call))
        answer.syncToken = OpaqueText.written(answer.syncToken)
        return try encode(answer)
    }

    /// The caller's database's changes since the opaque token a request gave (`zones/changes` calls it
    /// `metaSyncToken`, `changes/database` `syncToken`); none: from the start.
    private func databaseChanges(since token: String?, _ call: OperationCall) async throws -> DatabaseChanges {
        try await call.store.databaseChanges(
            in: call.database, since: token.map { ChangeToken(rawValue: OpaqueText.read($0)) }, as: call.user)
    }

    /// The Zone Dictionaries of an answer, as the live service writes them (`EmulatorService+Reference`).
    private func dictionaries(_ zones: [WireZone], _ call: OperationCall) async -> [WireZone] {
        await zoneDictionaries(zones, store: call.store, database: call.database, as: call.user)
    }

    private func wire(_ zoneID: ZoneID, _ result: Result<Zone, ShareError>) -> WireZone {
        switch result {
        case .success(let zone): WireZone(zone)
        case .failure(let error): WireZone(zoneID: zoneID, error: error)
        }
    }
}
