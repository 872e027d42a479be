/// A notification a subscription produced for its owner, kept by the store until a client receives it.
public struct SubscriptionNotification: Sendable, Hashable, Codable {
    /// The store's order of notifications: later notifications have greater sequences.
    public var sequence: Int64
    /// `ck.nid`: one change that matches several subscriptions gives one notification per subscription, all
    /// with this same ID.
    public var notificationID: String
    /// The user the notification is for (the subscription's owner).
    public var recipient: UserRecordName
    public var subscriptionID: String
    public var kind: Subscription.Kind
    /// The database of the subscription.
    public var database: DatabaseScope
    /// The zone of the change, as the recipient names it in that database.
    public var zoneID: ZoneID
    /// The changed record (query subscriptions).
    public var recordName: String?
    /// What happened to the record (query subscriptions).
    public var reason: Subscription.Trigger?
    /// `aps.alert`, the subscription's `alertBody`.
    public var alertBody: String?
    /// Who wrote the change.
    public var changedBy: UserRecordName

    public init(
        sequence: Int64, notificationID: String, recipient: UserRecordName, subscriptionID: String,
        kind: Subscription.Kind, database: DatabaseScope, zoneID: ZoneID, recordName: String?,
        reason: Subscription.Trigger?, alertBody: String?, changedBy: UserRecordName
    ) {
        self.sequence = sequence
        self.notificationID = notificationID
        self.recipient = recipient
        self.subscriptionID = subscriptionID
        self.kind = kind
        self.database = database
        self.zoneID = zoneID
        self.recordName = recordName
        self.reason = reason
        self.alertBody = alertBody
        self.changedBy = changedBy
    }
}

/// Where a client receives a user's notifications (`tokens/create`): notifications produced after the
/// channel was opened are delivered on it, each once, oldest first.
public struct NotificationChannel: Sendable, Hashable, Codable {
    /// `development` or `production`, as asked.
    public var apnsEnvironment: String
    /// Names the channel; a secret of the user's (never printed).
    public var apnsToken: String
    /// The long-poll URL a web client GETs, on a served store; nil on a local store.
    public var webcourierURL: String?

    public init(apnsEnvironment: String, apnsToken: String, webcourierURL: String? = nil) {
        self.apnsEnvironment = apnsEnvironment
        self.apnsToken = apnsToken
        self.webcourierURL = webcourierURL
    }
}
