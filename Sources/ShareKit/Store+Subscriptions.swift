extension Store {
    /// For stores that keep no subscriptions: a clear refusal.
    public func listSubscriptions(in database: DatabaseScope, as user: UserRecordName) async throws
        -> [Subscription]
    {
        throw noSubscriptions()
    }

    /// For stores that keep no subscriptions: a clear refusal.
    public func lookupSubscriptions(_ subscriptionIDs: [String], in database: DatabaseScope, as user: UserRecordName)
        async throws -> [SubscriptionOutcome]
    {
        throw noSubscriptions()
    }

    /// For stores that keep no subscriptions: a clear refusal.
    public func modifySubscriptions(
        _ operations: [SubscriptionOperation], in database: DatabaseScope, as user: UserRecordName
    ) async throws -> [SubscriptionOutcome] {
        throw noSubscriptions()
    }

    /// For stores that deliver no notifications: a clear refusal.
    public func openNotificationChannel(apnsEnvironment: String, as user: UserRecordName) async throws
        -> NotificationChannel
    {
        throw noSubscriptions()
    }

    /// For stores that deliver no notifications: a clear refusal.
    public func receiveNotifications(on channel: NotificationChannel, limit: Int, as user: UserRecordName)
        async throws -> [SubscriptionNotification]
    {
        throw noSubscriptions()
    }

    private func noSubscriptions() -> ShareError {
        ShareError(
            .badRequest, "\(displayName) keeps no subscriptions; use a sqlite:, memory:, http: or cloudkit: store",
            subject: displayName)
    }
}
