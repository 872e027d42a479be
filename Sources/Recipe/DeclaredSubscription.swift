import ShareKit

/// A subscription a recipe's user holds (an entry of `subscriptions:`): plan adds it when the store lacks
/// it, changes it when it differs, and export writes it back.
public struct DeclaredSubscription: Sendable, Hashable, Codable {
    /// The handle of the user who holds it (`as:`; the owner when the entry does not say).
    public var handle: String
    /// What it watches, in the words of a lane's `subscribe` step.
    public var subscribe: SubscribeStep
    public var location: SourceLocation

    public init(handle: String, subscribe: SubscribeStep, location: SourceLocation) {
        self.handle = handle
        self.subscribe = subscribe
        self.location = location
    }

    /// `alice/private/all-changes`: the user, the database and the subscription ID.
    public var path: String { "\(handle)/\(subscribe.database.rawValue)/\(subscribe.subscriptionID)" }
}
