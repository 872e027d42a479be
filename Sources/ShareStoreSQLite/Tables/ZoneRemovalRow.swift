import GRDB
import ShareKit

/// A row of `zoneRemoval`: a zone that left a user's database (deleted, or no longer shared with them), so
/// that database changes can report it.
struct ZoneRemovalRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "zoneRemoval"
    enum Columns {
        static let scope = Column(CodingKeys.scope)
        static let user = Column(CodingKeys.user)
        static let owner = Column(CodingKeys.owner)
        static let zoneName = Column(CodingKeys.zoneName)
        static let seq = Column(CodingKeys.seq)
    }

    /// `private` (the owner deleted the zone) or `shared` (the user lost access to it).
    var scope: DatabaseScope
    var user: String
    var owner: String
    var zoneName: String
    var seq: Int64
}
