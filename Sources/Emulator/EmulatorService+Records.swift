import CloudKitWire
import Foundation
import Hummingbird
import ShareKit

// `records/modify` and `records/lookup`, and the record operations a request sends as the store takes them.
extension EmulatorService {
    func modifyRecords(_ call: OperationCall) async throws -> ByteBuffer {
        let (store, database, user) = (call.store, call.database, call.user)
        let request = try decode(ModifyRecordsRequest.self, from: call.body)
        try checkLimit(request.operations.count, "operations")
        let zoneID = request.zoneID?.zoneID ?? .defaultZone
        // Refused whole, as the live service refuses them, before anything is kept: the flag itself in a default
        // zone (whatever the count of operations), and a write that needs a change tag and sends none.
        if request.atomic == true, let refusal = ModifyRules.atomicInDefaultZone(zoneID) { throw refusal }
        let sent = try await recordOperations(request.operations, in: zoneID, store: store, as: user)
        if let refusal = ModifyRules.missingChangeTag(sent) { throw refusal }
        let atomic = request.atomic ?? (database != .public && zoneID.zoneName != defaultZoneName)
        let (kept, refusedAssets) = try await keepingAssets(sent, store: store)
        // An asset that names no kept bytes refuses its own operation, in its place, and the others are carried
        // out (as the live service answers a non-atomic batch); an atomic request is refused whole for it.
        if atomic, let refusal = refusedAssets.sorted(by: { $0.key < $1.key }).first?.value {
            let reason = [refusal.reason, refusal.insight].compactMap { $0 }.joined(separator: ": ")
            throw ShareError(refusal.code, reason, subject: refusal.subject)
        }
        let operations = kept.indices.filter { refusedAssets[$0] == nil }.map { kept[$0] }
        var carriedOut: IndexingIterator<[RecordOutcome]> =
            operations.isEmpty
            ? [].makeIterator()
            : Self.conflictForExistingCreates(
                operations,
                try await Self.forceDeletingAsLive(operations, database: database, atomic: atomic) { sent in
                    try await modify(sent, store: store, in: zoneID, database: database, atomic: atomic, as: user)
                }
            ).makeIterator()
        let outcomes = kept.indices.map { index in
            refusedAssets[index].map { RecordOutcome.failed(recordName: kept[index].recordName, $0) }
                ?? carriedOut.next()
                ?? .failed(
                    recordName: kept[index].recordName,
                    ShareError(.internalError, "the store answered fewer outcomes than operations"))
        }
        for case .failed(let name, let error) in outcomes where error.code != .atomicError {
            RequestNotes.refused(error, subject: "\(zoneID.zoneName)/\(name)")
        }
        return try encode(
            RecordsAnswer(
                outcomes, currentUser: user, desiredKeys: request.desiredKeys,
                numbersAsStrings: request.numbersAsStrings))
    }

    func lookupRecords(_ call: OperationCall) async throws -> ByteBuffer {
        let request = try decode(LookupRecordsRequest.self, from: call.body)
        try checkLimit(request.records.count, "records")
        let zoneID = request.zoneID?.zoneID ?? .defaultZone
        // Written as the store reads them; the public database's default zone answers records without their
        // zoneID, as the live service does.
        let answer = RecordsAnswerWriter(
            currentUser: call.user, desiredKeys: request.desiredKeys, numbersAsStrings: request.numbersAsStrings,
            capacity: request.records.count * 400,
            listsZoneID: call.database != .public || zoneID.zoneName != defaultZoneName)
        try await call.store.lookupRecords(
            request.records.map(\.recordName), in: zoneID, database: call.database, as: call.user, into: answer)
        for (name, error) in answer.refusals {
            RequestNotes.refused(error, subject: "\(zoneID.zoneName)/\(name)")
        }
        return try encode(answer, continuationMarker: nil)
    }

    /// Applies record operations. In the shared database a participant that deletes a share leaves it, as
    /// in CloudKit; those deletes go to `leaveShare`, the rest to `modifyRecords`, and the outcomes keep the
    /// request's order.
    private func modify(
        _ operations: [RecordOperation], store: any Store, in zoneID: ZoneID, database: DatabaseScope, atomic: Bool,
        as user: UserRecordName
    ) async throws -> [RecordOutcome] {
        let operations = try await namingShares(operations, store: store, in: zoneID, database: database, as: user)
        func isLeave(_ operation: RecordOperation) -> Bool {
            guard database == .shared, operation.kind.isDelete, case .share = operation.item else { return false }
            return true
        }
        guard operations.contains(where: isLeave) else {
            return try await store.modifyRecords(operations, in: zoneID, database: database, atomic: atomic, as: user)
        }
        let others = operations.filter { !isLeave($0) }
        var otherOutcomes =
            others.isEmpty
            ? []
            : try await store.modifyRecords(others, in: zoneID, database: database, atomic: atomic, as: user)
        var outcomes: [RecordOutcome] = []
        for operation in operations {
            if isLeave(operation) {
                do {
                    try await store.leaveShare(recordName: operation.recordName, in: zoneID, as: user)
                    outcomes.append(.deleted(recordName: operation.recordName))
                } catch let error as ShareError {
                    outcomes.append(.failed(recordName: operation.recordName, error))
                }
            } else {
                outcomes.append(otherOutcomes.removeFirst())
            }
        }
        return outcomes
    }

    /// In the shared database, a delete that names a record by its name alone (CloudKit JS's `deleteRecords`
    /// sends no type) may name a share, which the participant then leaves: such names are looked up, as the
    /// caller, and a share's becomes a share operation.
    private func namingShares(
        _ operations: [RecordOperation], store: any Store, in zoneID: ZoneID, database: DatabaseScope,
        as user: UserRecordName
    ) async throws -> [RecordOperation] {
        guard database == .shared else { return operations }
        let untyped = operations.indices.filter { index in
            guard operations[index].kind.isDelete, case .record(let record) = operations[index].item else {
                return false
            }
            return record.recordType.isEmpty
        }
        guard !untyped.isEmpty else { return operations }
        let found = try await store.lookupRecords(
            untyped.map { operations[$0].recordName }, in: zoneID, database: database, as: user)
        var result = operations
        for (index, outcome) in zip(untyped, found) {
            guard case .savedShare(var share) = outcome, case .record(let record) = operations[index].item else {
                continue
            }
            share.changeTag = record.changeTag
            result[index] = RecordOperation(operations[index].kind, share: share)
        }
        return result
    }

    /// The request's operations as the store takes them. Values sent without a `type` (as CloudKit JS sends
    /// them) take their field's type in the schema (`SchemaRules.settling`): the schema as it is, grown by the
    /// request's earlier operations, so that a field one operation creates settles the values after it. The
    /// schema is read only for a request that has such a value; sharelane's own client always sends `type`.
    private func recordOperations(
        _ wireOperations: [ModifyRecordsRequest.Operation], in zoneID: ZoneID, store: any Store,
        as user: UserRecordName
    ) async throws -> [RecordOperation] {
        var operations = try wireOperations.map { try recordOperation($0, in: zoneID) }
        let untyped = wireOperations.map(\.record.untypedFieldNames)
        guard untyped.contains(where: { !$0.isEmpty }) else { return operations }
        var schema = try await store.schema(in: store.environment, as: user)
        for index in operations.indices {
            guard case .record(var record) = operations[index].item else { continue }
            if !untyped[index].isEmpty {
                record.fields = SchemaRules.settling(
                    record.fields, untyped: untyped[index], recordType: record.recordType, in: schema)
                operations[index].item = .record(record)
            }
            // A refusal here is the store's to answer, in its place in the batch.
            _ = try? SchemaRules.admit(
                recordType: record.recordType, fields: record.fields, into: &schema, environment: store.environment)
        }
        return operations
    }

    private func recordOperation(_ operation: ModifyRecordsRequest.Operation, in zoneID: ZoneID) throws
        -> RecordOperation
    {
        guard let kind = WireSpelling.operationKind(operation.operationType) else {
            throw ShareError(
                .badRequest,
                "unknown operationType \"\(operation.operationType)\"; expected one of "
                    + OperationKind.allCases.map(WireSpelling.operationType).joined(separator: ", "))
        }
        var record = operation.record
        if record.isShare || record.recordName == zoneShareRecordName {
            // A new share without a name is named by the store (zone-wide shares are cloudkit.zoneshare).
            record.recordType = shareRecordType
            return RecordOperation(kind, share: try record.shareValue(in: zoneID))
        }
        if record.recordName == nil {
            guard kind == .create || kind == .forceUpdate || kind == .forceReplace else {
                throw ShareError(.badRequest, "a \(WireSpelling.operationType(kind)) operation needs record.recordName")
            }
            record.recordName = UUID().uuidString.lowercased()
        }
        if record.recordType == nil, !kind.isDelete {
            throw ShareError(
                .badRequest, "a \(WireSpelling.operationType(kind)) operation needs record.recordType",
                subject: record.recordName)
        }
        return RecordOperation(kind, record.record(in: zoneID))
    }
}
