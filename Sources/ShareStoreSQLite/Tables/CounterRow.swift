import GRDB

/// The single row of `counter`: the store's last sequence number (`ChangeSequence` reads and writes it).
struct CounterRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "counter"
    enum Columns {
        static let id = Column(CodingKeys.id)
        static let seq = Column(CodingKeys.seq)
    }

    var id: Int = 1
    var seq: Int64

    /// The store's epoch: a new one on every reset; change tokens carry it.
    static func epoch(_ db: Database) throws -> String {
        try String.fetchOne(db.cachedStatement(sql: "SELECT epoch FROM counter WHERE id = 1")) ?? ""
    }

    /// The last sequence number taken.
    static func current(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM counter WHERE id = 1")) ?? 0
    }
}
