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
    /// Trimmed and lowercased, as `StableName.normalizedEmail` makes it.
    var email: String?
    var name: String?

    var user: User { User(recordName: recordName, email: email, name: name) }
}

// MARK: - Requests

extension DerivableRequest<UserRow> {
    /// The user of this email address, in any spelling `StableName.normalizedEmail` makes the same.
    func filter(email: String) -> Self {
        filter(UserRow.Columns.email == StableName.normalizedEmail(email))
    }
}
