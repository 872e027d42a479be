import AsyncHTTPClient
import Foundation
import NIOCore
import ShareKit

// MARK: - Subscriptions and notifications

extension WebServicesStore {
    public func listSubscriptions(in database: DatabaseScope, as user: UserRecordName) async throws
        -> [Subscription]
    {
        let response: SubscriptionsResponse = try await send(
            .subscriptionsList, database: database, body: nil as String?, as: user)
        return try response.subscriptions.map { entry in
            switch entry.outcome {
            case .saved(let subscription): return subscription
            case .failed(_, let error): throw error
            case .deleted(let id):
                throw ShareError(.internalError, "subscriptions/list answered \(id) without its subscriptionType")
            }
        }
    }

    public func lookupSubscriptions(_ subscriptionIDs: [String], in database: DatabaseScope, as user: UserRecordName)
        async throws -> [SubscriptionOutcome]
    {
        try await inChunks(subscriptionIDs) { chunk in
            let response: SubscriptionsResponse = try await send(
                .subscriptionsLookup, database: database, body: LookupSubscriptionsRequest(chunk), as: user)
            return try Self.inOrder(
                response.subscriptions.map(\.outcome), count: chunk.count, what: .subscriptionsLookup)
        }
    }

    public func modifySubscriptions(
        _ operations: [SubscriptionOperation], in database: DatabaseScope, as user: UserRecordName
    ) async throws -> [SubscriptionOutcome] {
        try await inChunks(operations) { chunk in
            let (response, resent): (SubscriptionsResponse, Bool) = try await sendNoting(
                .subscriptionsModify, database: database, body: ModifySubscriptionsRequest(chunk), as: user)
            let outcomes = try Self.inOrder(
                response.subscriptions.map(\.outcome), count: chunk.count, what: .subscriptionsModify)
            return resent
                ? try await settlingLostAnswers(chunk, outcomes, in: database, as: user) : outcomes
        }
    }

    /// `tokens/create` on the live service's path, `/device/1/{container}/{environment}/tokens/create`.
    public func openNotificationChannel(apnsEnvironment: String, as user: UserRecordName) async throws
        -> NotificationChannel
    {
        let response: TokensResponse = try await send(
            path: WireOperation.tokensCreate.devicePath(
                container: endpoint.container, environment: endpoint.environment),
            body: TokensRequest(apnsEnvironment: apnsEnvironment), auth: .user(user))
        return NotificationChannel(
            apnsEnvironment: response.apnsEnvironment, apnsToken: response.apnsToken,
            webcourierURL: response.webcourierURL)
    }

    /// GETs the channel's `webcourierURL` as CloudKit JS does, one notification per answer, until an empty
    /// answer or `limit`. On `sharelane serve` each GET asks not to wait (`wait=0`); on Apple's service a
    /// GET is a long-poll.
    public func receiveNotifications(on channel: NotificationChannel, limit: Int, as user: UserRecordName)
        async throws -> [SubscriptionNotification]
    {
        guard let base = channel.webcourierURL, var components = URLComponents(string: base) else {
            throw ShareError(
                .badRequest, "this notification channel has no webcourierURL; create it with tokens/create")
        }
        if endpoint.kind == .emulator {
            components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "wait", value: "0")]
        }
        guard let url = components.string else {
            throw ShareError(.badRequest, "the channel's webcourierURL is not a URL")
        }
        var received: [SubscriptionNotification] = []
        while received.count < max(limit, 1) {
            let request = HTTPClientRequest(url: url)
            let response: HTTPClientResponse
            let data: Data
            do {
                response = try await WebServicesStore.failFastClient.execute(request, timeout: .seconds(90))
                data = Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)
            } catch {
                throw ShareError(.tryAgainLater, "cannot reach the webcourier URL: \(error)", retryAfter: 1)
            }
            guard response.status.code == 200 else {
                throw ShareError(
                    response.status.code == 404 ? .notFound : .internalError,
                    "the webcourier answered \(response.status.code); create a new channel with tokens/create")
            }
            if data.isEmpty { break }
            let payload: WireNotification
            do {
                payload = try JSONDecoder().decode(WireNotification.self, from: data)
            } catch {
                throw ShareError(.internalError, "the webcourier answered a notification that cannot be read: \(error)")
            }
            guard let notification = payload.notification(recipient: user) else {
                throw ShareError(.internalError, "the webcourier answered a notification of an unknown database")
            }
            received.append(notification)
        }
        return received
    }
}

// MARK: - Lost answers

extension WebServicesStore {
    /// A `subscriptions/modify` sent again after a lost answer meets its earlier attempt's work: a creation
    /// answers `EXISTS`, a deletion `NOT_FOUND`. A creation whose subscription now is the one sent, and a
    /// deletion whose subscription is gone, count as done (read back with one `subscriptions/lookup`).
    fileprivate func settlingLostAnswers(
        _ chunk: [SubscriptionOperation], _ outcomes: [SubscriptionOutcome], in database: DatabaseScope,
        as user: UserRecordName
    ) async throws -> [SubscriptionOutcome] {
        var result = outcomes
        let created = chunk.indices.filter { chunk[$0].kind == .create && outcomes[$0].error?.code == .exists }
        for index in chunk.indices where chunk[index].kind == .delete && outcomes[index].error?.code == .notFound {
            result[index] = .deleted(subscriptionID: chunk[index].subscription.subscriptionID)
        }
        guard !created.isEmpty else { return result }
        let live = try await lookupSubscriptions(
            created.map { chunk[$0].subscription.subscriptionID }, in: database, as: user)
        for (index, outcome) in zip(created, live) {
            if case .saved(let subscription) = outcome, subscription.sameAsSent(chunk[index].subscription) {
                result[index] = .saved(subscription)
            }
        }
        return result
    }
}

extension Subscription {
    /// Whether this subscription, read back, is the one sent (its zone by name: the store writes the owner).
    fileprivate func sameAsSent(_ sent: Subscription) -> Bool {
        guard kind == sent.kind, alertBody == sent.alertBody else { return false }
        switch kind {
        case .query:
            return recordType == sent.recordType && filters == sent.filters && zoneWide == sent.zoneWide
                && firesOn == sent.firesOn && firesOnce == sent.firesOnce
                && (zoneWide || zoneID?.zoneName == sent.zoneID?.zoneName)
        case .zone:
            return zoneID?.zoneName == sent.zoneID?.zoneName
        case .database:
            return true
        }
    }
}
