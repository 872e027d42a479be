import Recipe
import ShareKit

extension LaneSession {
    /// The user's notification channel in this run, opened on first use (`tokens/create` on a served store).
    func notificationChannel(for user: User) async throws -> NotificationChannel {
        if let known = channels[user.recordName] { return known }
        let channel = try await store.openNotificationChannel(apnsEnvironment: "development", as: user.recordName)
        channels[user.recordName] = channel
        return channel
    }

    /// Receives what waits on the user's channel and takes out the notifications of `subscription`; the
    /// others stay for later checks.
    func takeNotifications(of subscription: String, for user: User, location: SourceLocation) async throws
        -> [SubscriptionNotification]
    {
        guard let channel = channels[user.recordName] else {
            throw LaneError.stepFailed(
                action: "expect notified",
                reason: "no `subscribe` step ran as this user earlier in the lane; notifications are received "
                    + "from the user's first `subscribe` on", location: location)
        }
        var waiting = received[user.recordName] ?? []
        while true {
            let batch = try await store.receiveNotifications(on: channel, limit: 200, as: user.recordName)
            waiting += batch
            if batch.count < 200 { break }
        }
        let taken = waiting.filter { $0.subscriptionID == subscription }
        received[user.recordName] = waiting.filter { $0.subscriptionID != subscription }
        return taken
    }
}
