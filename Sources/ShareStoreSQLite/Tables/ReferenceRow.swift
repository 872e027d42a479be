import GRDB

/// A row of `reference`: a `DELETE_SELF` reference from `source` to `target` in one zone, so that deleting
/// the target finds what to delete with it without reading every record.
struct ReferenceRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "reference"
    enum Columns {
        static let zoneId = Column(CodingKeys.zoneId)
        static let source = Column(CodingKeys.source)
        static let target = Column(CodingKeys.target)
    }

    var zoneId: Int64
    var source: String
    var target: String
}
