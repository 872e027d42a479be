import GRDB

/// A row of `tombstone`: a deleted record or share, so that zone changes can report the deletion.
struct TombstoneRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "tombstone"
    enum Columns {
        static let zoneId = Column(CodingKeys.zoneId)
        static let name = Column(CodingKeys.name)
        static let seq = Column(CodingKeys.seq)
        static let shareRoot = Column(CodingKeys.shareRoot)
    }

    var zoneId: Int64
    var name: String
    var seq: Int64
    /// The hierarchy the record belonged to when deleted, so that participants hear of it.
    var shareRoot: String?
}
