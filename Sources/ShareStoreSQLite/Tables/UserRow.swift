import GRDB
import ShareKit

/// A row of `user`: a person in the container.
struct UserRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "user"
    enum Columns {
        static let recordName = Column(CodingKeys.recordName)
        static let email = Column(CodingKeys.email)
        static let name = Column(CodingKeys.name)
    }

    var recordName: String
    /// Trimmed and lowercased, as `EmailAddress.normalized` makes it.
    var email: String?
    var name: String?

    var user: User { User(recordName: recordName, email: email, name: name) }

    /// The user of this record name, through a cached statement: a share save looks up each participant, a
    /// thousand of them in an apply of 100 shares of 10.
    static func fetchOne(_ db: Database, recordName: String) throws -> UserRow? {
        try UserRow.fetchOne(
            db.cachedStatement(sql: "SELECT * FROM user WHERE recordName = ?"), arguments: [recordName])
    }
}

extension UserRow {
    /// Read by column, not through `Decodable` (see `ZoneRow.init(row:)`): a share save looks up each of its
    /// participants.
    init(row: Row) throws {
        self.init(
            recordName: try row.decode(forColumn: "recordName"), email: try row.decode(forColumn: "email"),
            name: try row.decode(forColumn: "name"))
    }
}

// MARK: - Requests

extension DerivableRequest<UserRow> {
    /// The user of this email address, in any spelling `EmailAddress.normalized` makes the same.
    func filter(email: String) -> Self {
        filter(UserRow.Columns.email == EmailAddress.normalized(email))
    }
}
