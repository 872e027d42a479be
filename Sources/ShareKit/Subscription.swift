/// A subscription: a standing request of one user, in one database, to be notified of changes.
///
/// CloudKit Web Services knows `query` subscriptions (records of a type matching filters, on create, update
/// or delete) and `zone` subscriptions (any change in a zone). `database` subscriptions (any change in the
/// database, `CKDatabaseSubscription`) are native CloudKit's; sharelane serves them under
/// `subscriptionType: "database"` too, since the Web Services reference does not list them.
public struct Subscription: Sendable, Hashable, Codable {
    /// What a subscription watches.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// Records of one type matching filters.
        case query
        /// Every record of one zone.
        case zone
        /// Every record of the database.
        case database
    }

    /// A change a query subscription fires on (`firesOn`), and the reason a notification gives.
    public enum Trigger: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
        case create
        case update
        case delete

        /// Create, update, delete: the order a subscription lists them in.
        private var rank: Int {
            switch self {
            case .create: 0
            case .update: 1
            case .delete: 2
            }
        }

        public static func < (lhs: Trigger, rhs: Trigger) -> Bool { lhs.rank < rhs.rank }
    }

    /// What two query subscriptions of one user and database must not share: live CloudKit keeps one query
    /// subscription per record type and `firesOn` set, and answers a second with `INTERNAL_ERROR` (the
    /// reference documents no such rule). The store refuses the second; a recipe declaring both is refused
    /// when it loads. Nil for zone and database subscriptions.
    public static func queryTwinKey(kind: Kind, recordType: String?, firesOn: [Trigger]) -> String? {
        guard kind == .query else { return nil }
        return "\(recordType ?? "")|" + Set(firesOn).sorted().map(\.rawValue).joined(separator: ",")
    }

    /// This subscription's `queryTwinKey`.
    public var queryTwinKey: String? { Self.queryTwinKey(kind: kind, recordType: recordType, firesOn: firesOn) }

    /// Unique per user and database; named by the store (a UUID) when created without one.
    public var subscriptionID: String
    public var kind: Kind
    /// The record type a query subscription watches.
    public var recordType: String?
    /// A query subscription's filters, evaluated as `records/query` evaluates them.
    public var filters: [QueryFilter]
    /// The zone a query or zone subscription watches (a query subscription without one watches the default
    /// zone, or every zone with `zoneWide`).
    public var zoneID: ZoneID?
    /// A query subscription watches every zone of its database.
    public var zoneWide: Bool
    /// The changes a query subscription fires on, in create, update, delete order (zone and database
    /// subscriptions fire on every change).
    public var firesOn: [Trigger]
    /// The subscription is removed after it fires once.
    public var firesOnce: Bool
    /// `notificationInfo.alertBody`: the alert text of its notifications.
    public var alertBody: String?

    public init(
        subscriptionID: String, kind: Kind, recordType: String? = nil, filters: [QueryFilter] = [],
        zoneID: ZoneID? = nil, zoneWide: Bool = false, firesOn: [Trigger] = Trigger.allCases, firesOnce: Bool = false,
        alertBody: String? = nil
    ) {
        self.subscriptionID = subscriptionID
        self.kind = kind
        self.recordType = recordType
        self.filters = filters
        self.zoneID = zoneID
        self.zoneWide = zoneWide
        self.firesOn = Array(Set(firesOn)).sorted()
        self.firesOnce = firesOnce
        self.alertBody = alertBody
    }

    /// A query subscription watching `recordType` in `zoneID` (or the default zone).
    public static func query(
        _ subscriptionID: String, recordType: String, filters: [QueryFilter] = [], zoneID: ZoneID? = nil,
        zoneWide: Bool = false, firesOn: [Trigger] = Trigger.allCases, firesOnce: Bool = false,
        alertBody: String? = nil
    ) -> Subscription {
        Subscription(
            subscriptionID: subscriptionID, kind: .query, recordType: recordType, filters: filters, zoneID: zoneID,
            zoneWide: zoneWide, firesOn: firesOn, firesOnce: firesOnce, alertBody: alertBody)
    }

    /// A zone subscription watching every record of `zoneID`.
    public static func zone(_ subscriptionID: String, _ zoneID: ZoneID, alertBody: String? = nil) -> Subscription {
        Subscription(subscriptionID: subscriptionID, kind: .zone, zoneID: zoneID, alertBody: alertBody)
    }

    /// A database subscription watching every record of its database.
    public static func database(_ subscriptionID: String, alertBody: String? = nil) -> Subscription {
        Subscription(subscriptionID: subscriptionID, kind: .database, alertBody: alertBody)
    }

    /// Whether the subscription fires on this kind of change.
    public func fires(on trigger: Trigger) -> Bool {
        kind != .query || firesOn.contains(trigger)
    }

    /// Checks what CloudKit checks before saving: a query subscription needs a record type and at least one
    /// `firesOn`, a zone subscription a zone; nil when the subscription is well-formed.
    public func problem() -> String? {
        if subscriptionID.isEmpty { return "a subscription needs a non-empty subscriptionID" }
        switch kind {
        case .query:
            if (recordType ?? "").isEmpty { return "a query subscription needs query.recordType" }
            if firesOn.isEmpty { return "a query subscription needs firesOn: one or more of create, update, delete" }
        case .zone:
            if zoneID == nil { return "a zone subscription needs a zoneID" }
        case .database:
            break
        }
        return nil
    }
}

/// One operation of `subscriptions/modify`.
public struct SubscriptionOperation: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable { case create, update, delete }
    public var kind: Kind
    /// For a delete only `subscriptionID` counts.
    public var subscription: Subscription

    public init(_ kind: Kind, _ subscription: Subscription) {
        self.kind = kind
        self.subscription = subscription
    }

    /// A delete of the subscription with this ID.
    public static func delete(_ subscriptionID: String) -> SubscriptionOperation {
        SubscriptionOperation(.delete, .database(subscriptionID))
    }
}

/// The outcome of one subscription in a list, lookup or modify, in the request's order.
public enum SubscriptionOutcome: Sendable, Hashable, Codable {
    case saved(Subscription)
    /// A delete answers only the ID (`{subscriptionID}`).
    case deleted(subscriptionID: String)
    case failed(subscriptionID: String, ShareError)

    public var error: ShareError? {
        if case .failed(_, let e) = self { return e }
        return nil
    }

    public var subscriptionID: String {
        switch self {
        case .saved(let s): s.subscriptionID
        case .deleted(let id), .failed(let id, _): id
        }
    }
}
