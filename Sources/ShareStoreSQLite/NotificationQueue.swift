import Foundation
import GRDB
import ShareKit

/// The notifications waiting for delivery, and the channels (`tokens/create`) they wait for: kept only as
/// long as some channel may still deliver them, as a push service keeps a message only for a device that
/// will receive it.
///
/// - A notification is kept only for a recipient with a channel: a channel delivers what is made after it
///   was opened, so one made while its recipient has none would never be delivered.
/// - Once every channel of its recipient has delivered it, it is gone.
/// - A recipient keeps at most `notificationsPerRecipient` undelivered notifications; when more are made the
///   oldest go, and a channel that fell that far behind receives from the oldest kept on.
/// - A user keeps at most `channelsPerUser` channels: opening one more closes their oldest, whose token then
///   answers not found (create a new one, as CloudKit JS does when its long-poll fails).
enum NotificationQueue {
    static let notificationsPerRecipient = 1000
    static let channelsPerUser = 10

    static func enqueue(_ notification: SubscriptionNotification, db: Database) throws {
        let recipient = notification.recipient
        guard
            try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM notificationChannel WHERE user = ?)"),
                arguments: [recipient]) == true
        else { return }
        try db.cachedStatement(sql: "INSERT INTO notification (recipient, payload) VALUES (?, ?)")
            .execute(arguments: [recipient, try JSONEncoder().encode(notification)])
        try db.cachedStatement(
            sql: """
                DELETE FROM notification WHERE recipient = ?1 AND seq <= (
                    SELECT seq FROM notification WHERE recipient = ?1 ORDER BY seq DESC LIMIT 1 OFFSET ?2)
                """
        ).execute(arguments: [recipient, notificationsPerRecipient])
    }

    /// Opens a channel for the user that delivers what is made from now on, closing their oldest beyond
    /// `channelsPerUser`.
    static func openChannel(token: String, user: UserRecordName, apnsEnvironment: String, db: Database) throws {
        // AUTOINCREMENT: a sequence number is never used twice, even once its notification is gone.
        let last =
            try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'notification'") ?? 0
        try db.execute(
            sql: "INSERT INTO notificationChannel (token, user, apnsEnvironment, delivered) VALUES (?, ?, ?, ?)",
            arguments: [token, user, apnsEnvironment, last])
        try db.execute(
            sql: """
                DELETE FROM notificationChannel WHERE user = ?1 AND rowid <= (
                    SELECT rowid FROM notificationChannel WHERE user = ?1 ORDER BY rowid DESC LIMIT 1 OFFSET ?2)
                """, arguments: [user, channelsPerUser])
        try dropDelivered(of: user, db: db)
    }

    /// Up to `limit` notifications the channel has not delivered yet, oldest first, marked delivered.
    static func receive(token: String, user: UserRecordName, limit: Int, db: Database) throws
        -> [SubscriptionNotification]
    {
        guard
            let delivered = try Int64.fetchOne(
                db, sql: "SELECT delivered FROM notificationChannel WHERE token = ? AND user = ?",
                arguments: [token, user])
        else {
            throw ShareError(
                .notFound,
                "no notification channel of \(user) has this token (a user keeps their \(channelsPerUser) newest); "
                    + "create one with tokens/create")
        }
        let rows = try Row.fetchAll(
            db,
            sql: "SELECT seq, payload FROM notification WHERE recipient = ? AND seq > ? ORDER BY seq LIMIT ?",
            arguments: [user, delivered, max(limit, 1)])
        var notifications: [SubscriptionNotification] = []
        for row in rows {
            var notification = try JSONDecoder().decode(SubscriptionNotification.self, from: row["payload"] as Data)
            notification.sequence = row["seq"]
            notifications.append(notification)
        }
        if let last = notifications.last {
            try db.execute(
                sql: "UPDATE notificationChannel SET delivered = ? WHERE token = ?", arguments: [last.sequence, token])
            try dropDelivered(of: user, db: db)
        }
        return notifications
    }

    /// Deletes the user's notifications every one of their channels has delivered (all of them when the user
    /// has no channel).
    private static func dropDelivered(of user: UserRecordName, db: Database) throws {
        try db.execute(
            sql: """
                DELETE FROM notification WHERE recipient = ?1 AND seq <= COALESCE(
                    (SELECT MIN(delivered) FROM notificationChannel WHERE user = ?1), 9223372036854775807)
                """, arguments: [user])
    }
}
