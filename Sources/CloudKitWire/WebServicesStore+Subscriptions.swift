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
            let response: SubscriptionsResponse = try await send(
                .subscriptionsModify, database: database, body: ModifySubscriptionsRequest(chunk), as: user)
            return try Self.inOrder(
                response.subscriptions.map(\.outcome), count: chunk.count, what: .subscriptionsModify)
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
