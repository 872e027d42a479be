import CloudKitWire
import Foundation
import HTTPTypes
import Hummingbird
import ShareKit

/// `subscriptions/list|lookup|modify`, `tokens/create|register` (on the reference's database path and on the
/// live service's `/device/1/…` path) and the webcourier long-poll that delivers notifications.
extension EmulatorService {
    /// How long a webcourier GET waits for a notification before answering an empty body (poll again).
    static let webcourierWait: Duration = .seconds(20)

    /// Answers a subscription operation with `store` acting in the request's environment.
    func subscriptions(
        _ operation: WireOperation, store: any Store, database: DatabaseScope, body: Data, as user: UserRecordName
    ) async throws -> ByteBuffer {
        switch operation {
        case .subscriptionsList:
            let found = try await store.listSubscriptions(in: database, as: user)
            return try encode(SubscriptionsResponse(subscriptions: found.map(WireSubscription.init)))
        case .subscriptionsLookup:
            let request = try decode(LookupSubscriptionsRequest.self, from: body)
            try checkLimit(request.subscriptions.count, "subscriptions")
            let outcomes = try await store.lookupSubscriptions(
                request.subscriptions.map(\.subscriptionID), in: database, as: user)
            return try encode(SubscriptionsResponse(subscriptions: outcomes.map(WireSubscription.init)))
        case .subscriptionsModify:
            let request = try decode(ModifySubscriptionsRequest.self, from: body)
            try checkLimit(request.operations.count, "operations")
            let outcomes = try await store.modifySubscriptions(
                try request.subscriptionOperations(), in: database, as: user)
            return try encode(SubscriptionsResponse(subscriptions: outcomes.map(WireSubscription.init)))
        default:
            throw ShareError(.badRequest, "unknown operation \(operation)")
        }
    }

    /// `tokens/create` and `tokens/register`, on either path; the user is the request's (web auth token).
    func tokens(_ operation: WireOperation, _ request: Request, context: EmulatorRequestContext) async throws
        -> Response
    {
        var request = request
        // The path's container and environment, refused as every other operation's are.
        let world = try Self.world(context)
        let user = try context.user()
        let bodyData: ByteBuffer
        do {
            bodyData = try await request.collectBody(upTo: configuration.maxBodyBytes)
        } catch {
            throw configuration.bodyTooLarge
        }
        let body = try decode(TokensRequest.self, from: Data(bodyData.readableBytesView))
        try await takePendingResetPoint(world)
        let store = try await self.store(for: world, as: user)
        switch operation {
        case .tokensCreate:
            var channel = try await store.openNotificationChannel(apnsEnvironment: body.apnsEnvironment, as: user)
            // The address the request's connection reached (the socket's), never its Host header: a client
            // writes that, and whoever follows the URL (a replay of an edited recording) would send the
            // user's tokens to any port it named.
            let host = context.localAddress ?? "\(configuration.host):\(configuration.port)"
            // The token is hex: it goes in the query as it is.
            channel.webcourierURL = "http://\(host)\(WireSpelling.webcourierPath)?tok=\(channel.apnsToken)"
            await channels.add(
                .init(channel: channel, user: user, container: world.container, environment: world.environment))
            return WireResponse.json(try WireCoding.bodyEncoder().encode(TokensResponse(channel)))
        default:
            // A device registers its APNs token; sharelane sends no pushes, so the token is echoed, as Apple
            // answers.
            guard let token = body.apnsToken, !token.isEmpty else {
                throw ShareError(.badRequest, "tokens/register needs an apnsToken")
            }
            let channel = NotificationChannel(apnsEnvironment: body.apnsEnvironment, apnsToken: token)
            return WireResponse.json(try WireCoding.bodyEncoder().encode(TokensResponse(channel)))
        }
    }

    /// The webcourier long-poll: one notification per answer, oldest first; an empty body after a bounded
    /// wait (`webcourierWait`, or `wait` seconds, sharelane's own parameter for tests) means poll again; an
    /// unknown token answers 404, which ends CloudKit JS's loop.
    func webcourier(_ request: Request) async throws -> Response {
        let parameters = request.uri.queryParameters
        guard let token = parameters["tok"].map(String.init), let entry = await channels.entry(token) else {
            throw ShareError(
                .notFound, "no notification channel has this token; create one with tokens/create")
        }
        var wait = Self.webcourierWait
        if let text = parameters["wait"], let seconds = Double(String(text)), seconds >= 0 {
            // Clamped before converting: `wait=1e300` or `inf` must not overflow.
            wait = .milliseconds(Int64(min(seconds, 20) * 1000))
        }
        let store = try worlds.store(for: StoreWorld(container: entry.container, environment: entry.environment))
        let deadline = ContinuousClock.now + wait
        while true {
            let found = try await store.receiveNotifications(on: entry.channel, limit: 1, as: entry.user)
            if let first = found.first {
                return WireResponse.json(
                    try WireCoding.bodyEncoder().encode(WireNotification(first, container: entry.container)))
            }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: min(.milliseconds(100), deadline - ContinuousClock.now))
        }
        return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody())
    }

}
