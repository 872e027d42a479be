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
    /// Every column, in the order `init(_:)` reads them.
    static let selection = "zoneId, name, root, title, publicPermission, seq, shortGUID"

    /// The row of a query whose first columns are `selection`'s, read through SQLite's C API: a zone's shares
    /// are read with it, and an acceptance reads its share (a thousand an apply of the benchmark, each a
    /// request of its own over `http:`).
    /// - Throws: `INTERNAL_ERROR` for a public permission the enum does not know (a damaged store).
    init(_ columns: borrowing DirectStatement.Columns) throws {
        let permission = columns.string(4)
        guard let publicPermission = Permission(rawValue: permission) else {
            throw ShareError(
                .internalError, "the store holds a share with an unknown public permission '\(permission)'",
                subject: columns.string(1))
        }
        self.init(
            zoneId: columns.int64(0), name: columns.string(1), root: columns.optionalString(2),
            title: columns.optionalString(3), publicPermission: publicPermission, seq: columns.int64(5),
            shortGUID: columns.string(6))
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
