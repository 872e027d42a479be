import Foundation
import SharelaneTestSupport
import Logging
import ShareKit
import ShareStoreSQLite

/// A store in a fresh temporary directory, removed when the fixture is released.
final class TemporaryStore {
    let scratch: TemporaryDirectory
    var directory: URL { scratch.url }
    let path: String
    let store: SQLiteStore

    init() throws {
        scratch = try TemporaryDirectory("store")
        path = scratch.url.appendingPathComponent("nested/store.sqlite").path
        store = try SQLiteStore(path: path, logger: Logger(label: "test"))
    }

    /// Opens the same file again, as a second process would.
    func reopen() throws -> SQLiteStore {
        try SQLiteStore(path: path, logger: Logger(label: "test"))
    }
}

/// Short ways to call the store in tests.
extension Store {
    func create(_ record: Record, in zone: ZoneID, _ database: DatabaseScope = .private, as user: UserRecordName)
        async throws -> RecordOutcome
    {
        try await modifyRecords(
            [RecordOperation(.create, record)], in: zone, database: database, atomic: false, as: user)[0]
    }

    func record(_ name: String, in zone: ZoneID, _ database: DatabaseScope = .private, as user: UserRecordName)
        async throws -> Record?
    {
        if case .saved(let r) = try await lookupRecords([name], in: zone, database: database, as: user)[0] { return r }
        return nil
    }

    func share(_ name: String, in zone: ZoneID, _ database: DatabaseScope = .private, as user: UserRecordName)
        async throws -> Share?
    {
        if case .savedShare(let s) = try await lookupRecords([name], in: zone, database: database, as: user)[0] {
            return s
        }
        return nil
    }

    /// Everything in a zone as its owner sees it: records and shares, for before/after comparisons.
    func snapshot(_ zone: ZoneID, owner: UserRecordName) async throws -> ZoneSnapshot {
        let changes = try await zoneChanges(zone, in: .private, since: nil, resultsLimit: nil, as: owner)
        return ZoneSnapshot(
            records: changes.changedRecords.sorted { $0.recordName < $1.recordName },
            shares: changes.changedShares.sorted { $0.recordName < $1.recordName })
    }
}

struct ZoneSnapshot: Equatable {
    var records: [Record]
    var shares: [Share]
}

extension RecordOutcome {
    /// The saved record, or nil.
    var record: Record? {
        if case .saved(let r) = self { return r }
        return nil
    }

    var share: Share? {
        if case .savedShare(let s) = self { return s }
        return nil
    }

    var code: ServerErrorCode? { error?.code }
}

func todo(_ name: String, in zone: ZoneID, title: String, parent: String? = nil) -> Record {
    Record(recordName: name, recordType: "Todo", zoneID: zone, fields: ["title": .string(title)], parent: parent)
}

/// GRDB also has a `Record`: in these tests the name means ShareKit's.
typealias Record = ShareKit.Record
