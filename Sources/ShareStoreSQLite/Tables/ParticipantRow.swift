import GRDB
import ShareKit

/// A row of `participant`: someone a share is shared with (never its owner).
struct ParticipantRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "participant"
    enum Columns {
        static let zoneId = Column(CodingKeys.zoneId)
        static let shareName = Column(CodingKeys.shareName)
        static let user = Column(CodingKeys.user)
        static let role = Column(CodingKeys.role)
        static let permission = Column(CodingKeys.permission)
        static let acceptance = Column(CodingKeys.acceptance)
        static let position = Column(CodingKeys.position)
    }

    var zoneId: Int64
    var shareName: String
    var user: String
    var role: ParticipantRole
    var permission: Permission
    var acceptance: AcceptanceStatus
    /// The order participants were listed in.
    var position: Int
}
