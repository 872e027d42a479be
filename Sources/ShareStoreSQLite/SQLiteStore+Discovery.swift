import GRDB
import ShareKit

// MARK: - Users as Apple: discoverability, phone numbers, identities

extension SQLiteStore {
    public func setDiscoverability(_ settings: UserDiscoverability, as user: UserRecordName) async throws {
        try Self.admit(user, .aboutTheUser, .public)
        var phone: String?
        if let given = settings.phone {
            guard let normalized = PhoneNumber.normalized(given) else {
                throw ShareError(
                    .badRequest, "'\(given)' is not a phone number in international form, such as +15551234567",
                    subject: given)
            }
            phone = normalized
        }
        let newPhone = phone
        try await write("setting the discoverability of \(user)") { db in
            guard try UserRow.fetchOne(db, key: user) != nil else {
                throw ShareError(
                    .authenticationFailed, "no user \(user) in this store; sign in with an email address first",
                    subject: user)
            }
            if let phone = newPhone,
                let other = try String.fetchOne(
                    db, sql: "SELECT recordName FROM user WHERE phone = ? AND recordName != ?",
                    arguments: [phone, user])
            {
                throw ShareError(
                    .conflict, "the phone number \(phone) belongs to another user (\(other))", subject: phone)
            }
            try db.execute(
                sql: "UPDATE user SET phone = ?, discoverable = ? WHERE recordName = ?",
                arguments: [newPhone, settings.discoverable, user])
        }
    }

    public func discoverability(as user: UserRecordName) async throws -> UserDiscoverability {
        try Self.admit(user, .aboutTheUser, .public)
        return try await read("reading the discoverability of \(user)") { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT phone, discoverable FROM user WHERE recordName = ?", arguments: [user])
            else {
                throw ShareError(
                    .authenticationFailed, "no user \(user) in this store; sign in with an email address first",
                    subject: user)
            }
            return UserDiscoverability(phone: row["phone"], discoverable: row["discoverable"])
        }
    }

    public func discoverUsers(_ lookups: [UserLookup], as user: UserRecordName) async throws -> [UserIdentity] {
        try Self.admit(user, .aboutTheUser, .public)
        return try await read("discovering users") { db in
            try lookups.map { lookup in
                guard let found = try Self.userRow(lookup, db: db) else { return UserIdentity(lookup: lookup) }
                let discoverable: Bool =
                    try Bool.fetchOne(
                        db, sql: "SELECT discoverable FROM user WHERE recordName = ?", arguments: [found.recordName])
                    ?? false
                guard AccessRules.mayDiscover(caller: user, user: found.recordName, discoverable: discoverable) else {
                    return UserIdentity(lookup: lookup)
                }
                return UserIdentity(lookup: lookup, userRecordName: found.recordName, name: found.name)
            }
        }
    }

    /// The user a lookup names, discoverable or not.
    static func userRow(_ lookup: UserLookup, db: Database) throws -> UserRow? {
        switch lookup {
        case .email(let email):
            return try UserRow.all().filter(email: email).fetchOne(db)
        case .phone(let phone):
            guard let normalized = PhoneNumber.normalized(phone) else { return nil }
            guard
                let name = try String.fetchOne(
                    db, sql: "SELECT recordName FROM user WHERE phone = ?", arguments: [normalized])
            else { return nil }
            return try UserRow.fetchOne(db, key: name)
        case .recordName(let name):
            return try UserRow.fetchOne(db, key: name)
        }
    }
}
