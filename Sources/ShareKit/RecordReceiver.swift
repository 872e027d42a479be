import Foundation

/// A record a store has read, handed to a `RecordReceiver` as it is read, with no `Record` made: its text as
/// the store's own UTF-8 bytes and its fields packed (`PackedFields`). A server answering 200 records spent a
/// fifth of its time making records and their fields dictionaries and letting them go.
///
/// The pointers are valid only during the `receive` call it is handed to.
package struct RecordReading {
    package var recordName: UnsafeRawBufferPointer
    package var recordType: UnsafeRawBufferPointer
    /// In the zone as the caller sees it (`Record.zoneID`).
    package var zoneID: ZoneID
    /// `PackedFields`' bytes.
    package var fields: UnsafeRawBufferPointer
    package var parent: UnsafeRawBufferPointer?
    package var changeTag: String
    package var createdAt: Int64
    package var createdBy: UnsafeRawBufferPointer
    package var modifiedAt: Int64
    package var modifiedBy: UnsafeRawBufferPointer
    package var shareRecordName: String?

    package init(
        recordName: UnsafeRawBufferPointer, recordType: UnsafeRawBufferPointer, zoneID: ZoneID,
        fields: UnsafeRawBufferPointer, parent: UnsafeRawBufferPointer?, changeTag: String, createdAt: Int64,
        createdBy: UnsafeRawBufferPointer, modifiedAt: Int64, modifiedBy: UnsafeRawBufferPointer,
        shareRecordName: String?
    ) {
        self.recordName = recordName
        self.recordType = recordType
        self.zoneID = zoneID
        self.fields = fields
        self.parent = parent
        self.changeTag = changeTag
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.modifiedAt = modifiedAt
        self.modifiedBy = modifiedBy
        self.shareRecordName = shareRecordName
    }

    /// The record itself, for a receiver that needs one.
    /// - Throws: `PackedFieldsError` for fields that are not packed fields.
    package func record() throws -> Record {
        Record(
            recordName: Self.text(recordName), recordType: Self.text(recordType), zoneID: zoneID,
            fields: try PackedFields.unpack(fields), parent: parent.map(Self.text), changeTag: changeTag,
            created: Stamp(timestamp: createdAt, userRecordName: Self.text(createdBy)),
            modified: Stamp(timestamp: modifiedAt, userRecordName: Self.text(modifiedBy)),
            shareRecordName: shareRecordName)
    }

    /// Text as `String` reads it: bytes that are not UTF-8 are repaired, as the store's other reads do.
    package static func text(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }
}

/// Takes the outcomes of a lookup or query as a store reads them (`Store.lookupRecords(_:in:database:as:into:)`,
/// `Store.queryRecords(_:in:database:as:into:)`): each entry of the answer by its index, each index once, in
/// any order. The store has made its access checks before it hands a record over.
package protocol RecordReceiver: AnyObject, Sendable {
    /// The entry at `index` is this record, read in place.
    func receive(_ record: RecordReading, at index: Int) throws
    /// The entry at `index` is this outcome: a record made whole, a share, or a failure.
    func receive(_ outcome: RecordOutcome, at index: Int) throws
}

/// Collects the outcomes a store hands over into the answer they make, in index order: what
/// `lookupRecords(_:in:database:as:)` and `queryRecords(_:in:database:as:)` return.
package final class RecordOutcomes: RecordReceiver, @unchecked Sendable {
    // Filled by one store call at a time, on one thread; read after it.
    private var entries: [RecordOutcome?] = []

    package init() {}

    package func receive(_ record: RecordReading, at index: Int) throws {
        try receive(.saved(record.record()), at: index)
    }

    package func receive(_ outcome: RecordOutcome, at index: Int) throws {
        if index >= entries.count { entries.append(contentsOf: repeatElement(nil, count: index + 1 - entries.count)) }
        entries[index] = outcome
    }

    /// The outcomes in index order.
    /// - Throws: `INTERNAL_ERROR` when an index before the last was left without one.
    package func outcomes() throws -> [RecordOutcome] {
        try entries.enumerated().map { index, entry in
            guard let entry else {
                throw ShareError(.internalError, "the store answered no outcome for entry \(index)")
            }
            return entry
        }
    }

    /// The records in index order (a query's, which are all records).
    /// - Throws: `INTERNAL_ERROR` for a missing entry or one that is not a record.
    package func records() throws -> [Record] {
        try outcomes().map { outcome in
            guard case .saved(let record) = outcome else {
                throw ShareError(.internalError, "the store answered a query with \(outcome)")
            }
            return record
        }
    }
}

/// A store that hands records over as it reads them (the SQLite store): the fast path of the emulator's
/// answers, inside this package only. It is no part of the `Store` protocol a store outside implements.
package protocol ReadsRecordsInPlace: Store {
    /// `lookupRecords(_:in:database:as:)` with each outcome handed to `receiver` as it is read, by its index in
    /// `recordNames`.
    func readRecords(
        _ recordNames: [String], in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName,
        into receiver: some RecordReceiver
    ) async throws
    /// `queryRecords(_:in:database:as:)` with each record of the page handed to `receiver` as it is read, by
    /// its index in the page; the page's continuation marker.
    func readQuery(
        _ query: RecordQuery, in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName,
        into receiver: some RecordReceiver
    ) async throws -> String?
    /// `zoneChanges(_:in:since:resultsLimit:as:)` with each changed record handed to `receiver` as it is read,
    /// by its index among the page's records: the page's shares, deletions, token and `moreComing`, its
    /// `changedRecords` empty.
    func readZoneChanges(
        _ zoneID: ZoneID, in database: DatabaseScope, since token: ChangeToken?, resultsLimit: Int?,
        as user: UserRecordName, into receiver: some RecordReceiver
    ) async throws -> ZoneChanges
}

extension Store {
    /// `lookupRecords(_:in:database:as:)`, each outcome handed over by its index, in place where the store
    /// reads records so (`ReadsRecordsInPlace`).
    package func lookupRecords(
        _ recordNames: [String], in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName,
        into receiver: some RecordReceiver
    ) async throws {
        if let inPlace = self as? any ReadsRecordsInPlace {
            return try await inPlace.readRecords(recordNames, in: zoneID, database: database, as: user, into: receiver)
        }
        let outcomes = try await lookupRecords(recordNames, in: zoneID, database: database, as: user)
        for (index, outcome) in outcomes.enumerated() { try receiver.receive(outcome, at: index) }
    }

    /// `queryRecords(_:in:database:as:)`, each record handed over by its index, in place where the store reads
    /// records so (`ReadsRecordsInPlace`); the continuation marker.
    package func queryRecords(
        _ query: RecordQuery, in zoneID: ZoneID, database: DatabaseScope, as user: UserRecordName,
        into receiver: some RecordReceiver
    ) async throws -> String? {
        if let inPlace = self as? any ReadsRecordsInPlace {
            return try await inPlace.readQuery(query, in: zoneID, database: database, as: user, into: receiver)
        }
        let page = try await queryRecords(query, in: zoneID, database: database, as: user)
        for (index, record) in page.records.enumerated() { try receiver.receive(.saved(record), at: index) }
        return page.continuationMarker
    }

    /// `zoneChanges(_:in:since:resultsLimit:as:)`, each changed record handed over by its index among the page's
    /// records, in place where the store reads records so (`ReadsRecordsInPlace`): the page's shares,
    /// deletions, token and `moreComing`, its `changedRecords` empty.
    package func zoneChanges(
        _ zoneID: ZoneID, in database: DatabaseScope, since token: ChangeToken?, resultsLimit: Int?,
        as user: UserRecordName, into receiver: some RecordReceiver
    ) async throws -> ZoneChanges {
        if let inPlace = self as? any ReadsRecordsInPlace {
            return try await inPlace.readZoneChanges(
                zoneID, in: database, since: token, resultsLimit: resultsLimit, as: user, into: receiver)
        }
        var changes = try await zoneChanges(zoneID, in: database, since: token, resultsLimit: resultsLimit, as: user)
        for (index, record) in changes.changedRecords.enumerated() { try receiver.receive(.saved(record), at: index) }
        changes.changedRecords = []
        return changes
    }
}
