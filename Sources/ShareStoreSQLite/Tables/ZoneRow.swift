import GRDB
import ShareKit

/// A row of `zone`: a zone of one user's private database, or the public database's default zone.
struct ZoneRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "zone"
    enum Columns {
        static let id = Column(CodingKeys.id)
        static let scope = Column(CodingKeys.scope)
        static let owner = Column(CodingKeys.owner)
        static let name = Column(CodingKeys.name)
        static let seq = Column(CodingKeys.seq)
    }

    /// The owner of the public database's zone.
    static let publicOwner = ""

    var id: Int64?
    /// `private` or `public` (shared databases are views of private zones).
    var scope: DatabaseScope
    /// The owner's user record name; empty in the public database.
    var owner: String
    var name: String
    /// The sequence number of the last change in the zone (for database change tokens).
    var seq: Int64

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    /// The zone of this name and owner in one database, through a cached statement: every store call resolves
    /// its zone, and building and preparing the query-interface request cost more than the lookup (an apply
    /// of 10,000 records makes hundreds of calls).
    static func fetchOne(_ db: Database, scope: DatabaseScope, owner: String, name: String) throws -> ZoneRow? {
        try ZoneRow.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM zone WHERE scope = ? AND owner = ? AND name = ?"),
            arguments: [scope, owner, name])
    }
}

extension ZoneRow {
    /// Read by column, not through `Decodable`, whose generic decoding was half the cost of resolving a zone,
    /// which every store call does. A scope the enum does not know still fails to decode.
    init(row: Row) throws {
        self.init(
            id: try row.decode(forColumn: "id"), scope: try row.decode(forColumn: "scope"),
            owner: try row.decode(forColumn: "owner"), name: try row.decode(forColumn: "name"),
            seq: try row.decode(forColumn: "seq"))
    }
}

// MARK: - Requests

extension DerivableRequest<ZoneRow> {
    /// The zone of this name and owner in one database.
    func zone(scope: DatabaseScope, owner: String, name: String) -> Self {
        filter(ZoneRow.Columns.scope == scope && ZoneRow.Columns.owner == owner && ZoneRow.Columns.name == name)
    }

    /// The zone of this name in `owner`'s private database.
    func privateZone(owner: String, name: String) -> Self {
        zone(scope: .private, owner: owner, name: name)
    }

    /// The public database's one zone.
    func publicZone() -> Self {
        filter(ZoneRow.Columns.scope == DatabaseScope.public && ZoneRow.Columns.name == defaultZoneName)
    }
}
