import Recipe
import ShareKit

extension LaneRunner {
    /// Saves the subscription as the acting user (created, or updated when it exists) and opens the user's
    /// notification channel, once per run.
    func subscribe(_ subscribe: SubscribeStep, step: Step, recipe: Recipe, _ session: LaneSession) async throws
        -> String?
    {
        let (handle, actor) = try await session.actor(of: step, in: recipe)
        let owner = try await session.owner(ofZone: subscribe.zone, in: recipe, at: step.location)
        let zoneID = subscribe.zone.map { session.place(ofZone: $0, for: actor, owner: owner).zoneID }
        let subscription = Subscription(
            subscriptionID: subscribe.subscriptionID, kind: subscribe.kind, recordType: subscribe.recordType,
            zoneID: zoneID, firesOn: subscribe.firesOn, firesOnce: subscribe.firesOnce, alertBody: subscribe.alertBody)
        _ = try await session.notificationChannel(for: actor)
        var outcome = try await store.modifySubscriptions(
            [.init(.create, subscription)], in: subscribe.database, as: actor.recordName)[0]
        if outcome.error?.code == .exists {
            outcome = try await store.modifySubscriptions(
                [.init(.update, subscription)], in: subscribe.database, as: actor.recordName)[0]
        }
        if let error = outcome.error { throw error }
        return "\(handle) subscribed to \(subscribe.kind.rawValue) changes as \(subscribe.subscriptionID)"
    }
}
