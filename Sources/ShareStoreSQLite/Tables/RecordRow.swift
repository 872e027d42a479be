import Foundation
import GRDB
import ShareKit

/// A row of `record`: one record of a zone, its fields packed (`PackedFields`).
struct RecordRow {
    /// Every column, in the order `init(_:)` reads them and `insert(in:)` binds them.
    static let selection =
        "zoneId, name, type, fields, parent, shareRoot, seq, createdAt, createdBy, modifiedAt, modifiedBy, tagSeq"

    var zoneId: Int64
    var name: String
    var type: String
    var fields: Data
    var parent: String?
    /// The root of the hierarchy share the record belongs to (the root names itself); nil outside any.
    /// Kept in step with parent chains so that access checks need no walk up the chain.
    var shareRoot: String?
    /// The record's place in the zone's change feed: the sequence number of its last write, or of the last
    /// time it joined or left a shared hierarchy.
    var seq: Int64
    var createdAt: Int64
    var createdBy: String
    var modifiedAt: Int64
    var modifiedBy: String
    /// The sequence number of the record's last write when it moved in the feed since (see `seq`); nil when
    /// that is `seq`. The change tag is derived from it.
    var tagSeq: Int64?

    init(
        zoneId: Int64, name: String, type: String, fields: Data, parent: String?, shareRoot: String?, seq: Int64,
        createdAt: Int64, createdBy: String, modifiedAt: Int64, modifiedBy: String
    ) {
        self.zoneId = zoneId
        self.name = name
        self.type = type
        self.fields = fields
        self.parent = parent
        self.shareRoot = shareRoot
        self.seq = seq
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.modifiedAt = modifiedAt
        self.modifiedBy = modifiedBy
    }

    /// The row of a query selecting `selection`, read through SQLite's C API.
    init(_ columns: borrowing DirectStatement.Columns) {
        zoneId = columns.int64(0)
        name = columns.string(1)
        type = columns.string(2)
        fields = columns.data(3)
        parent = columns.optionalString(4)
        shareRoot = columns.optionalString(5)
        seq = columns.int64(6)
        createdAt = columns.int64(7)
        createdBy = columns.string(8)
        modifiedAt = columns.int64(9)
        modifiedBy = columns.string(10)
        tagSeq = columns.optionalInt64(11)
    }

    var changeTag: String { Self.changeTag(seq: seq, tagSeq: tagSeq) }

    /// The sequence number of a row selecting `selection`, read in place.
    static func seq(of columns: borrowing DirectStatement.Columns) -> Int64 { columns.int64(6) }

    /// A record's change tag: from the sequence number of its last write (`tagSeq` when it moved since).
    static func changeTag(seq: Int64, tagSeq: Int64?) -> String { ChangeSequence.tag(tagSeq ?? seq) }

    func record(in zoneID: ZoneID, shareRecordName: String?) throws -> Record {
        Record(
            recordName: name, recordType: type, zoneID: zoneID, fields: try PackedFields.unpack(fields), parent: parent,
            changeTag: changeTag, created: Stamp(timestamp: createdAt, userRecordName: createdBy),
            modified: Stamp(timestamp: modifiedAt, userRecordName: modifiedBy), shareRecordName: shareRecordName)
    }

    /// The record of a row selecting `selection` as a `RecordReading` of the row's own bytes: valid only while
    /// the row is (what the emulator answers is written from it, no `Record` made; `record()` makes
    /// one from SQLite's bytes, not from a copy of the row).
    static func reading(
        _ columns: borrowing DirectStatement.Columns, in zoneID: ZoneID, shareRecordName: String?
    ) -> RecordReading {
        RecordReading(
            recordName: columns.text(1), recordType: columns.text(2), zoneID: zoneID, fields: columns.blob(3),
            parent: columns.optionalText(4),
            changeTag: changeTag(seq: columns.int64(6), tagSeq: columns.optionalInt64(11)),
            createdAt: columns.int64(7), createdBy: columns.text(8), modifiedAt: columns.int64(9),
            modifiedBy: columns.text(10), shareRecordName: shareRecordName)
    }
}

// MARK: - Writes

extension RecordRow {
    /// Inserts the row, its values bound in `selection`'s order through SQLite's C API (`DirectStatement`):
    /// an apply inserts records by the thousand.
    func insert(in db: Database) throws {
        var insert = DirectStatement(
            try db.cachedStatement(sql: "INSERT INTO record (\(Self.selection)) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"))
        insert.bind(zoneId)
        insert.bind(name)
        insert.bind(type)
        insert.bind(fields)
        insert.bind(parent)
        insert.bind(shareRoot)
        insert.bind(seq)
        insert.bind(createdAt)
        insert.bind(createdBy)
        insert.bind(modifiedAt)
        insert.bind(modifiedBy)
        insert.bind(tagSeq)
        try insert.run()
    }
}

// MARK: - Requests

extension RecordRow {
    /// How many names one `IN (…)` query takes (below SQLite's limit on host parameters).
    static let namesPerQuery = 500

    /// The rows of these names in one zone, a query per `namesPerQuery` names; names without a row are left out.
    static func fetchAll(_ db: Database, zoneId: Int64, names: [String]) throws -> [RecordRow] {
        var rows: [RecordRow] = []
        rows.reserveCapacity(names.count)
        try forEachRow(db, zoneId: zoneId, names: names) { rows.append(RecordRow($0)) }
        return rows
    }

    /// Each row of these names in one zone, read in place (valid only inside `body`), a query per
    /// `namesPerQuery` names; names without a row are left out.
    static func forEachRow(
        _ db: Database, zoneId: Int64, names: [String], _ body: (borrowing DirectStatement.Columns) throws -> Void
    ) throws {
        for start in stride(from: 0, to: names.count, by: namesPerQuery) {
            let chunk = names[start..<min(start + namesPerQuery, names.count)]
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            // Cached per count of names: preparing the statement of a 200-name lookup anew cost as much as
            // running it (the emulator under load); at most `namesPerQuery` statements a connection.
            var select = DirectStatement(
                try db.cachedStatement(
                    sql: "SELECT \(selection) FROM record WHERE zoneId = ? AND name IN (\(placeholders))"))
            select.bind(zoneId)
            select.bind(contentsOf: chunk)
            try select.forEachRow { row in
                try body(row)
                return true
            }
        }
    }
}
