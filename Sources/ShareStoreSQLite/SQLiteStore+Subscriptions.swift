import Foundation
import GRDB
import ShareKit

// MARK: - Subscriptions and notifications

extension SQLiteStore {
    public func listSubscriptions(in database: DatabaseScope, as user: UserRecordName) async throws
        -> [Subscription]
    {
        try Self.admit(user, .aboutTheUser, database)
        return try await read("listing subscriptions") { db in try SubscriptionRow.all(of: user, in: database, db: db) }
    }

    public func lookupSubscriptions(_ subscriptionIDs: [String], in database: DatabaseScope, as user: UserRecordName)
        async throws -> [SubscriptionOutcome]
    {
        try Self.admit(user, .aboutTheUser, database)
        return try await read("looking up subscriptions") { db in
            try subscriptionIDs.map { id in
                if let found = try SubscriptionRow.find(id, of: user, in: database, db: db) { return .saved(found) }
                return .failed(subscriptionID: id, Self.subscriptionNotFound(id, database))
            }
        }
    }

    public func modifySubscriptions(
        _ operations: [SubscriptionOperation], in database: DatabaseScope, as user: UserRecordName
    ) async throws -> [SubscriptionOutcome] {
        try Self.admit(user, .aboutTheUser, database)
        try CloudKitLimits.checkOperationCount(operations.count, of: "subscription operations")
        return try await write("modifying subscriptions") { db in
            try operations.map { operation in
                do {
                    return try Self.apply(operation, in: database, as: user, db: db)
                } catch let error as ShareError {
                    return .failed(subscriptionID: operation.subscription.subscriptionID, error)
                }
            }
        }
    }

    private static func apply(
        _ operation: SubscriptionOperation, in database: DatabaseScope, as user: UserRecordName, db: Database
    ) throws -> SubscriptionOutcome {
        var subscription = operation.subscription
        let existing = try SubscriptionRow.find(subscription.subscriptionID, of: user, in: database, db: db)
        switch operation.kind {
        case .delete:
            guard existing != nil else { throw subscriptionNotFound(subscription.subscriptionID, database) }
            try SubscriptionRow.delete(subscription.subscriptionID, of: user, in: database, db: db)
            return .deleted(subscriptionID: subscription.subscriptionID)
        case .create, .update:
            if operation.kind == .create, subscription.subscriptionID.isEmpty {
                subscription.subscriptionID = UUID().uuidString.lowercased()
            }
            if let problem = subscription.problem() {
                throw ShareError(.badRequest, problem, subject: subscription.subscriptionID)
            }
            if let refusal = refusal(of: subscription.kind, in: database) {
                throw ShareError(.badRequest, refusal, subject: subscription.subscriptionID)
            }
            if operation.kind == .create, existing != nil {
                throw ShareError(
                    .exists,
                    "the subscription \(subscription.subscriptionID) exists; update it, or create it with another ID",
                    subject: subscription.subscriptionID)
            }
            if operation.kind == .update, existing == nil {
                throw subscriptionNotFound(subscription.subscriptionID, database)
            }
            if let key = subscription.queryTwinKey,
                let twin = try SubscriptionRow.all(of: user, in: database, db: db).first(where: {
                    $0.subscriptionID != subscription.subscriptionID && $0.queryTwinKey == key
                })
            {
                throw ShareError(
                    .internalError,
                    "the query subscription \(twin.subscriptionID) already watches \(subscription.recordType ?? "") "
                        + "on \(subscription.firesOn.map(\.rawValue).joined(separator: ", ")); CloudKit keeps one "
                        + "per record type and firesOn: update that one, or delete it first",
                    subject: subscription.subscriptionID)
            }
            try SubscriptionRow(subscription, of: user, in: database).insert(db, onConflict: .replace)
            return .saved(subscription)
        }
    }

    /// Which kinds each database serves, as CloudKit: the public database query subscriptions only, the
    /// shared database database subscriptions only, the private database all three.
    static func refusal(of kind: Subscription.Kind, in database: DatabaseScope) -> String? {
        switch (database, kind) {
        case (.public, .query), (.private, _), (.shared, .database): return nil
        case (.public, _):
            return "the public database takes query subscriptions only, not \(kind.rawValue) subscriptions"
        case (.shared, _):
            return "the shared database takes database subscriptions only, not \(kind.rawValue) subscriptions"
        }
    }

    static func subscriptionNotFound(_ id: String, _ database: DatabaseScope) -> ShareError {
        ShareError(
            .notFound, "no subscription \(id) in this user's \(database.rawValue) database; list them to see theirs",
            subject: id)
    }

    public func openNotificationChannel(apnsEnvironment: String, as user: UserRecordName) async throws
        -> NotificationChannel
    {
        // A channel is the signed-in user's: the API token alone opens none.
        try Self.admit(user, .aboutTheUser, .private)
        guard apnsEnvironment == "development" || apnsEnvironment == "production" else {
            throw ShareError(
                .badRequest, "apnsEnvironment \"\(apnsEnvironment)\" is neither development nor production")
        }
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
        let token = bytes.map { String(format: "%02x", $0) }.joined()
        try await write("opening a notification channel") { db in
            try NotificationQueue.openChannel(token: token, user: user, apnsEnvironment: apnsEnvironment, db: db)
        }
        return NotificationChannel(apnsEnvironment: apnsEnvironment, apnsToken: token)
    }

    public func receiveNotifications(on channel: NotificationChannel, limit: Int, as user: UserRecordName)
        async throws -> [SubscriptionNotification]
    {
        let token = channel.apnsToken
        return try await write("receiving notifications") { db in
            try NotificationQueue.receive(token: token, user: user, limit: limit, db: db)
        }
    }
}
