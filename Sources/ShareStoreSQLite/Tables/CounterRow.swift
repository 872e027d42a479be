import GRDB

/// The single row of `counter`: the store's last sequence number. Every write takes the next one; change
/// tags and change tokens are made from it.
struct CounterRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "counter"
    enum Columns {
        static let id = Column(CodingKeys.id)
        static let seq = Column(CodingKeys.seq)
    }

    var id: Int = 1
    var seq: Int64
}
