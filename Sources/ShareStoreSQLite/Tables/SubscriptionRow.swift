import Foundation
import GRDB
import ShareKit

/// A row of `subscription`: one user's subscription in one database, as the JSON of `Subscription`.
struct SubscriptionRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "subscription"

    var user: String
    var scope: DatabaseScope
    var id: String
    var definition: Data

    init(_ subscription: Subscription, of user: UserRecordName, in scope: DatabaseScope) throws {
        self.user = user
        self.scope = scope
        id = subscription.subscriptionID
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        definition = try encoder.encode(subscription)
    }

    /// - Throws: `INTERNAL_ERROR` when the stored subscription cannot be read (a damaged store).
    func subscription() throws -> Subscription {
        do {
            return try JSONDecoder().decode(Subscription.self, from: definition)
        } catch {
            throw ShareError(.internalError, "the stored subscription \(id) of \(user) cannot be read: \(error)")
        }
    }

    /// The user's subscriptions in a database, by ID.
    static func all(of user: UserRecordName, in scope: DatabaseScope, db: Database) throws -> [Subscription] {
        try SubscriptionRow.fetchAll(
            db, sql: "SELECT * FROM subscription WHERE user = ? AND scope = ? ORDER BY id", arguments: [user, scope]
        ).map { try $0.subscription() }
    }

    static func find(_ id: String, of user: UserRecordName, in scope: DatabaseScope, db: Database) throws
        -> Subscription?
    {
        try SubscriptionRow.fetchOne(
            db, sql: "SELECT * FROM subscription WHERE user = ? AND scope = ? AND id = ?",
            arguments: [user, scope, id]
        )?.subscription()
    }

    static func delete(_ id: String, of user: UserRecordName, in scope: DatabaseScope, db: Database) throws {
        try db.execute(
            sql: "DELETE FROM subscription WHERE user = ? AND scope = ? AND id = ?", arguments: [user, scope, id])
    }
}
