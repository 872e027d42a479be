import ShareKit

/// A subscription as a plan carries it: whose it is, in which database, and what it becomes (or, for a
/// deletion, what it was).
public struct PlannedSubscription: Sendable, Hashable, Codable {
    /// The recipe's handle of the user who holds it.
    public var handle: String
    public var database: DatabaseScope
    /// Its zone, if any, names the owner's zone with the default owner (`__defaultOwner__`): the zones a
    /// subscription watches are in its user's own private database.
    public var subscription: Subscription

    public init(handle: String, database: DatabaseScope, subscription: Subscription) {
        self.handle = handle
        self.database = database
        self.subscription = subscription
    }

    /// `alice/private/all-changes`.
    public var path: String { "\(handle)/\(database.rawValue)/\(subscription.subscriptionID)" }
}
