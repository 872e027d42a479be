extension Subscription.Kind {
    /// Why `database` does not take subscriptions of this kind, or nil when it does. As CloudKit: the public
    /// database takes query subscriptions only, the shared database database subscriptions only, the private
    /// database all three.
    public func refusal(in database: DatabaseScope) -> String? {
        switch (database, self) {
        case (.public, .query), (.private, _), (.shared, .database): return nil
        case (.public, _):
            return "the public database takes query subscriptions only, not \(rawValue) subscriptions"
        case (.shared, _):
            return "the shared database takes database subscriptions only, not \(rawValue) subscriptions"
        }
    }
}
