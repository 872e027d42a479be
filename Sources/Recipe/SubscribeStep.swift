import ShareKit

/// A lane's `subscribe` step: the acting user saves a subscription (created, or updated when it exists)
/// and starts receiving its notifications, so that later `expect: { notified: ID }` steps can check them.
public struct SubscribeStep: Sendable, Hashable, Codable {
    public var subscriptionID: String
    public var database: DatabaseScope
    public var kind: Subscription.Kind
    /// The zone a zone or query subscription watches, as the recipe names it.
    public var zone: String?
    /// The record type of a query subscription.
    public var recordType: String?
    public var firesOn: [Subscription.Trigger]
    /// `fires_once: true`: the store removes the subscription after it fires once.
    public var firesOnce: Bool = false
    /// `alert:`: the alert text of its notifications (`notificationInfo.alertBody`).
    public var alertBody: String?

    public init(
        subscriptionID: String, database: DatabaseScope, kind: Subscription.Kind, zone: String? = nil,
        recordType: String? = nil, firesOn: [Subscription.Trigger] = Subscription.Trigger.allCases,
        firesOnce: Bool = false, alertBody: String? = nil
    ) {
        self.firesOnce = firesOnce
        self.alertBody = alertBody
        self.subscriptionID = subscriptionID
        self.database = database
        self.kind = kind
        self.zone = zone
        self.recordType = recordType
        self.firesOn = firesOn
    }
}
