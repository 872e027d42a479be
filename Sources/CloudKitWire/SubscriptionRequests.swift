import Foundation
import ShareKit

/// A subscription on the wire, Apple's subscription dictionary: `{subscriptionID, subscriptionType, query?,
/// zoneID?, zoneWide?, firesOn?, firesOnce?, notificationInfo?}`, or a per-subscription error
/// `{subscriptionID, serverErrorCode, reason, uuid}`. A delete's result is `{subscriptionID}` alone.
package struct WireSubscription: Codable, Sendable, Hashable {
    package struct NotificationInfo: Codable, Sendable, Hashable {
        package var alertBody: String?
        package var shouldBadge: Bool?
        package var shouldSendContentAvailable: Bool?
    }

    package var subscriptionID: String?
    package var subscriptionType: String?
    package var query: QueryRecordsRequest.Query?
    package var zoneID: WireZoneID?
    package var zoneWide: Bool?
    package var firesOn: [String]?
    package var firesOnce: Bool?
    package var notificationInfo: NotificationInfo?
    package var serverErrorCode: String?
    package var reason: String?
    package var uuid: String?

    package init(_ subscription: Subscription) {
        subscriptionID = subscription.subscriptionID
        subscriptionType = WireSpelling.subscriptionType(subscription.kind)
        if let recordType = subscription.recordType, subscription.kind == .query {
            query = QueryRecordsRequest.Query(
                recordType: recordType,
                filterBy: subscription.filters.isEmpty
                    ? nil
                    : subscription.filters.map {
                        QueryRecordsRequest.Filter(
                            comparator: WireSpelling.comparator($0.comparator), fieldName: $0.fieldName,
                            fieldValue: WireField($0.value)
                        )
                    }, sortBy: nil)
            firesOn = subscription.firesOn.map(WireSpelling.trigger)
            firesOnce = subscription.firesOnce ? true : nil
            zoneWide = subscription.zoneWide ? true : nil
        }
        zoneID = subscription.zoneID.map(WireZoneID.init)
        notificationInfo = subscription.alertBody.map { NotificationInfo(alertBody: $0) }
    }

    package init(deleted subscriptionID: String) {
        self.subscriptionID = subscriptionID
    }

    package init(subscriptionID: String, error: ShareError) {
        self.subscriptionID = subscriptionID
        serverErrorCode = WireSpelling.errorCode(error.code)
        reason = WireSpelling.reason(of: error)
        uuid = WireError.newUUID()
    }

    package init(_ outcome: SubscriptionOutcome) {
        switch outcome {
        case .saved(let subscription): self.init(subscription)
        case .deleted(let id): self.init(deleted: id)
        case .failed(let id, let error): self.init(subscriptionID: id, error: error)
        }
    }

    /// The ShareKit subscription this dictionary describes.
    /// - Throws: `BAD_REQUEST` for an unknown `subscriptionType`, `firesOn` word or comparator.
    package func subscription() throws -> Subscription {
        let type = subscriptionType ?? ""
        guard let kind = WireSpelling.subscriptionKind(type) else {
            throw ShareError(
                .badRequest, "unknown subscriptionType \"\(type)\"; expected query, zone or database",
                subject: subscriptionID)
        }
        let triggers = try (firesOn ?? []).map { word in
            guard let trigger = WireSpelling.trigger(word) else {
                throw ShareError(
                    .badRequest, "unknown firesOn \"\(word)\"; expected create, update or delete",
                    subject: subscriptionID
                )
            }
            return trigger
        }
        var filters: [QueryFilter] = []
        if let query {
            var request = QueryRecordsRequest(RecordQuery(recordType: query.recordType), in: .defaultZone)
            request.query = query
            filters = try request.recordQuery().filters
        }
        return Subscription(
            subscriptionID: subscriptionID ?? "", kind: kind, recordType: query?.recordType, filters: filters,
            zoneID: zoneID?.zoneID, zoneWide: zoneWide ?? false,
            firesOn: kind == .query ? triggers : Subscription.Trigger.allCases, firesOnce: firesOnce ?? false,
            alertBody: notificationInfo?.alertBody)
    }

    /// The outcome this entry reports: an error, a delete's bare `{subscriptionID}`, or a subscription.
    package var outcome: SubscriptionOutcome {
        let id = subscriptionID ?? ""
        if let serverErrorCode {
            return .failed(
                subscriptionID: id,
                WireError.shareError(
                    code: serverErrorCode, reason: reason, subject: "subscription \(id)", retryAfter: nil))
        }
        guard subscriptionType != nil else { return .deleted(subscriptionID: id) }
        do {
            return .saved(try subscription())
        } catch let error as ShareError {
            return .failed(subscriptionID: id, error)
        } catch {
            return .failed(subscriptionID: id, ShareError(.internalError, "\(error)"))
        }
    }
}

/// `subscriptions/lookup`: `{subscriptions: [{subscriptionID}]}`.
package struct LookupSubscriptionsRequest: Codable, Sendable, Hashable {
    package struct Entry: Codable, Sendable, Hashable {
        package var subscriptionID: String
    }

    package var subscriptions: [Entry]

    package init(_ ids: [String]) {
        subscriptions = ids.map(Entry.init)
    }
}

/// `subscriptions/modify`: `{operations: [{operationType: create|update|delete, subscription}]}`.
package struct ModifySubscriptionsRequest: Codable, Sendable, Hashable {
    package struct Operation: Codable, Sendable, Hashable {
        package var operationType: String
        package var subscription: WireSubscription
    }

    package var operations: [Operation]

    package init(_ operations: [SubscriptionOperation]) {
        self.operations = operations.map { operation in
            Operation(
                operationType: WireSpelling.subscriptionOperationType(operation.kind),
                subscription: operation.kind == .delete
                    ? WireSubscription(deleted: operation.subscription.subscriptionID)
                    : WireSubscription(operation.subscription))
        }
    }

    /// The ShareKit operations.
    /// - Throws: `BAD_REQUEST` for an unknown `operationType` or a malformed subscription.
    package func subscriptionOperations() throws -> [SubscriptionOperation] {
        try operations.map { operation in
            guard let kind = WireSpelling.subscriptionOperationKind(operation.operationType) else {
                throw ShareError(
                    .badRequest,
                    "unknown subscription operationType \"\(operation.operationType)\"; expected create, update or "
                        + "delete")
            }
            if kind == .delete {
                guard let id = operation.subscription.subscriptionID, !id.isEmpty else {
                    throw ShareError(.badRequest, "a delete operation needs subscription.subscriptionID")
                }
                return .delete(id)
            }
            return SubscriptionOperation(kind, try operation.subscription.subscription())
        }
    }
}

/// The answer to the subscription requests: `{subscriptions}`.
package struct SubscriptionsResponse: Codable, Sendable, Hashable {
    package var subscriptions: [WireSubscription]

    package init(subscriptions: [WireSubscription]) {
        self.subscriptions = subscriptions
    }
}

/// `tokens/create`: `{apnsEnvironment}`; `tokens/register` adds `apnsToken`.
package struct TokensRequest: Codable, Sendable, Hashable {
    package var apnsEnvironment: String
    package var apnsToken: String?

    package init(apnsEnvironment: String, apnsToken: String? = nil) {
        self.apnsEnvironment = apnsEnvironment
        self.apnsToken = apnsToken
    }
}

/// The answer to `tokens/create` (`{apnsEnvironment, apnsToken, webcourierURL}`) and `tokens/register`
/// (`{apnsEnvironment, apnsToken}`).
package struct TokensResponse: Codable, Sendable, Hashable {
    package var apnsEnvironment: String
    package var apnsToken: String
    package var webcourierURL: String?

    package init(_ channel: NotificationChannel) {
        apnsEnvironment = channel.apnsEnvironment
        apnsToken = channel.apnsToken
        webcourierURL = channel.webcourierURL
    }
}

/// One notification as the webcourier long-poll answers it, live's payload: `{aps: {alert}, ck: {nid, cid,
/// qry: {sid, rid, zid, zoid, fo, dbs}}}` for a query subscription, `ck.fet: {sid, zid, zoid, dbs}` for a zone
/// subscription and `ck.met: {sid, dbs}` for a database subscription (native CloudKit's keys; the Web
/// Services reference documents none of them). `dbs` is CloudKit's database scope number: 1 public,
/// 2 private, 3 shared.
package struct WireNotification: Codable, Sendable, Hashable {
    package struct APS: Codable, Sendable, Hashable {
        package var alert: String?
    }

    package struct Details: Codable, Sendable, Hashable {
        package var sid: String
        package var rid: String?
        package var zid: String?
        package var zoid: String?
        package var fo: Int?
        package var dbs: Int
    }

    package struct CK: Codable, Sendable, Hashable {
        package var nid: String
        package var cid: String
        package var qry: Details?
        package var fet: Details?
        package var met: Details?
    }

    package var aps: APS
    package var ck: CK

    package init(_ notification: SubscriptionNotification, container: String) {
        aps = APS(alert: notification.alertBody)
        let zoneID = notification.zoneID
        let owner = zoneID.ownerRecordName == defaultOwnerName ? notification.recipient : zoneID.ownerRecordName
        var details = Details(
            sid: notification.subscriptionID, rid: nil, zid: nil, zoid: nil, fo: nil,
            dbs: WireSpelling.databaseScopeNumber(notification.database))
        ck = CK(nid: notification.notificationID, cid: container)
        switch notification.kind {
        case .query:
            details.rid = notification.recordName
            details.zid = zoneID.zoneName
            details.zoid = owner
            details.fo = notification.reason.map(WireSpelling.triggerCode)
            ck.qry = details
        case .zone:
            details.zid = zoneID.zoneName
            details.zoid = owner
            ck.fet = details
        case .database:
            ck.met = details
        }
    }

    /// The notification this payload carries, for `recipient`.
    package func notification(recipient: UserRecordName) -> SubscriptionNotification? {
        let (kind, details): (Subscription.Kind, Details?) =
            ck.qry != nil ? (.query, ck.qry) : ck.fet != nil ? (.zone, ck.fet) : (.database, ck.met)
        guard let details, let database = WireSpelling.databaseScope(number: details.dbs) else { return nil }
        let owner = details.zoid ?? recipient
        let zoneID = ZoneID(
            zoneName: details.zid ?? defaultZoneName,
            ownerRecordName: database == .shared ? owner : defaultOwnerName)
        return SubscriptionNotification(
            sequence: 0, notificationID: ck.nid, recipient: recipient, subscriptionID: details.sid, kind: kind,
            database: database, zoneID: zoneID, recordName: details.rid,
            reason: details.fo.flatMap(WireSpelling.trigger(code:)),
            alertBody: aps.alert, changedBy: "")
    }
}
