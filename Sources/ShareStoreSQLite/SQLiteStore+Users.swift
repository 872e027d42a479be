import Foundation
import GRDB
import ShareKit

// MARK: - Store: users

extension SQLiteStore {
    public func signIn(email: String, name: String?) async throws -> User {
        let normalized = try Self.signInEmail(email)
        return try await write("signing in \(normalized)") { db in
            var sequence = try ChangeSequence.read(db)
            let user = try Self.signIn(normalized, name: name, db: db, sequence: &sequence)
            try sequence.store(db)
            return user
        }
    }

    /// Every user in one transaction, and the change sequence read and written once: an apply signs in every
    /// user the store does not have yet.
    public func signIn(_ users: [UserSignIn]) async throws -> [Result<User, ShareError>] {
        try await write("signing in \(users.count) users") { db in
            var sequence = try ChangeSequence.read(db)
            var results = [Result<User, ShareError>?](repeating: nil, count: users.count)
            var admitted: [(index: Int, normalized: String, recordName: UserRecordName)] = []
            admitted.reserveCapacity(users.count)
            for (index, user) in users.enumerated() {
                do {
                    let normalized = try Self.signInEmail(user.email)
                    admitted.append((index, normalized, StableName.userRecordName(email: normalized)))
                } catch let error as ShareError {
                    results[index] = .failure(error)  // refused before anything of this user was written
                }
            }
            // In the order of their record names, the keys of the user table and of their zones: in the order
            // of the recipe (their hashes' order) SQLite's own inserts of 100,000 users and zones took 2.4 s of
            // CPU, sorted 1.4 s (the sqlite3 tool, the same rows).
            admitted.sort { $0.recordName < $1.recordName }
            for user in admitted {
                do {
                    results[user.index] = .success(
                        try Self.signIn(user.normalized, name: users[user.index].name, db: db, sequence: &sequence))
                } catch let error as ShareError {
                    results[user.index] = .failure(error)
                }
            }
            try sequence.store(db)
            return results.map { $0 ?? .failure(ShareError(.internalError, "no result")) }
        }
    }

    /// The email address normalized, or why it cannot sign in.
    private static func signInEmail(_ email: String) throws -> String {
        if let refusal = EmailAddress.check(email) { throw refusal }
        return EmailAddress.normalized(email)
    }

    /// Signs in (creating) the user with this normalized address inside the caller's write transaction.
    private static func signIn(_ normalized: String, name: String?, db: Database, sequence: inout ChangeSequence)
        throws -> User
    {
        let recordName = StableName.userRecordName(email: normalized)
        let given = name?.isEmpty == false ? name : nil
        // Through SQLite's C API, not GRDB's `save`: an apply signs in a hundred users.
        var row: UserRow
        if let found = try UserRow.fetchOne(db, recordName: recordName) {
            row = found
            if let given, given != row.name {
                try DirectStatement.run("UPDATE user SET name = ? WHERE recordName = ?", in: db) {
                    $0.bind(given)
                    $0.bind(recordName)
                }
                row.name = given
            }
        } else {
            row = UserRow(recordName: recordName, email: normalized, name: given)
            try DirectStatement.run("INSERT INTO user (recordName, email, name) VALUES (?, ?, ?)", in: db) {
                $0.bind(row.recordName)
                $0.bind(row.email)
                $0.bind(row.name)
            }
        }
        _ = try ZoneContext.ensureZone(
            scope: .private, owner: recordName, name: defaultZoneName, db: db, sequence: &sequence)
        return row.user
    }

    /// The embedded store acts as any user: signing in creates the ones it does not have.
    public func canActAs(email: String) async -> Bool { true }

    public func signInExisting(email: String) async throws -> User? {
        let normalized = try Self.signInEmail(email)
        return try await read("looking up \(normalized)") { db in
            try UserRow.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM user WHERE email = ?"), arguments: [normalized])?
                .user
        }
    }

    /// Every address in one read, as `signIn(_:)` writes every user in one transaction: a plan looks up each of
    /// the recipe's users.
    public func signInExisting(_ emails: [String]) async throws -> [Result<User?, ShareError>] {
        try await read("looking up \(emails.count) users") { db in
            let select = try db.cachedStatement(sql: "SELECT * FROM user WHERE email = ?")
            return try emails.map { email in
                do {
                    let normalized = try Self.signInEmail(email)
                    return .success(try UserRow.fetchOne(select, arguments: [normalized])?.user)
                } catch let error as ShareError {
                    return .failure(error)
                }
            }
        }
    }

    public func currentUser(as user: UserRecordName) async throws -> User {
        try Self.admit(user, .aboutTheUser, .public)
        return try await read("reading user \(user)") { db in
            guard let row = try UserRow.fetchOne(db, key: user) else {
                throw ShareError(
                    .authenticationFailed, "no user \(user) in this store; sign in with an email address first",
                    subject: user)
            }
            return row.user
        }
    }

    public func lookupUsers(emails: [String], as user: UserRecordName) async throws -> [User?] {
        try Self.admit(user, .aboutTheUser, .public)
        return try await read("looking up users") { db in
            // One cached statement for every address, the row and its discoverability together: a plan on a
            // store that acts only as its owner looks up each of the recipe's users.
            let select = try db.cachedStatement(
                sql: "SELECT recordName, email, name, discoverable FROM user WHERE email = ?")
            return try emails.map { email in
                guard let found = try Row.fetchOne(select, arguments: [EmailAddress.normalized(email)]) else {
                    return nil
                }
                let row = try UserRow(row: found)
                let discoverable: Bool = try found.decode(forColumn: "discoverable")
                return AccessRules.mayDiscover(caller: user, user: row.recordName, discoverable: discoverable)
                    ? row.user : nil
            }
        }
    }
}
