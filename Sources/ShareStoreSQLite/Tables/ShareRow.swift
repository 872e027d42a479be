import GRDB
import ShareKit

/// A row of `share`: a zone-wide share or a hierarchy share, without its participants.
struct ShareRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "share"
    enum Columns {
        static let zoneId = Column(CodingKeys.zoneId)
        static let name = Column(CodingKeys.name)
        static let root = Column(CodingKeys.root)
        static let title = Column(CodingKeys.title)
        static let publicPermission = Column(CodingKeys.publicPermission)
        static let seq = Column(CodingKeys.seq)
        static let shortGUID = Column(CodingKeys.shortGUID)
    }

    var zoneId: Int64
    var name: String
    /// The root record of a hierarchy share; nil for a zone-wide share.
    var root: String?
    var title: String?
    var publicPermission: Permission
    var seq: Int64
    var shortGUID: String
}

extension ShareRow {
    /// Read by column, not through `Decodable` (see `ZoneRow.init(row:)`): a zone's shares are read with it.
    init(row: Row) throws {
        self.init(
            zoneId: try row.decode(forColumn: "zoneId"), name: try row.decode(forColumn: "name"),
            root: try row.decode(forColumn: "root"), title: try row.decode(forColumn: "title"),
            publicPermission: try row.decode(forColumn: "publicPermission"), seq: try row.decode(forColumn: "seq"),
            shortGUID: try row.decode(forColumn: "shortGUID"))
    }

    /// Inserts the row through a cached statement: GRDB's record insert encodes it through `Encodable` and
    /// builds its statement each time (a hundred shares an apply of the benchmark).
    func insert(in db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO share (zoneId, name, root, title, publicPermission, seq, shortGUID)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [zoneId, name, root, title, publicPermission, seq, shortGUID])
    }
}
