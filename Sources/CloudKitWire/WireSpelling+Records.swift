import ShareKit

// The words of records, queries and the operations that write them. Each is spelled here, by hand, and not
// taken from a ShareKit raw value: those spell ShareKit's own storage (SQLite columns, saved plans), which
// may change without the wire changing.
extension WireSpelling {
    // MARK: - Field types

    /// A field's `type`, as the reference's Field Value Types table spells it.
    public static func fieldType(_ type: FieldType) -> String {
        switch type {
        case .string: "STRING"
        case .int64: "INT64"
        case .double: "DOUBLE"
        case .timestamp: "TIMESTAMP"
        case .bytes: "BYTES"
        case .reference: "REFERENCE"
        case .assetID: "ASSETID"
        case .location: "LOCATION"
        case .stringList: "STRING_LIST"
        case .int64List: "INT64_LIST"
        case .doubleList: "DOUBLE_LIST"
        case .timestampList: "TIMESTAMP_LIST"
        case .bytesList: "BYTES_LIST"
        case .referenceList: "REFERENCE_LIST"
        case .locationList: "LOCATION_LIST"
        case .assetIDList: "ASSETID_LIST"
        }
    }

    /// Reads a field's `type`; nil for any other word.
    ///
    /// A switch rather than a search of every case: a batch of 200 records carries about a thousand fields,
    /// each read through here.
    public static func fieldType(_ word: String) -> FieldType? {
        switch word {
        case "STRING": .string
        case "INT64": .int64
        case "DOUBLE": .double
        case "TIMESTAMP": .timestamp
        case "BYTES": .bytes
        case "REFERENCE": .reference
        case "ASSETID": .assetID
        case "LOCATION": .location
        case "STRING_LIST": .stringList
        case "INT64_LIST": .int64List
        case "DOUBLE_LIST": .doubleList
        case "TIMESTAMP_LIST": .timestampList
        case "BYTES_LIST": .bytesList
        case "REFERENCE_LIST": .referenceList
        case "LOCATION_LIST": .locationList
        case "ASSETID_LIST": .assetIDList
        default: nil
        }
    }

    /// Every field type word, for a message that lists what a request may send.
    public static var fieldTypeWords: [String] { FieldType.allCases.map(fieldType) }

    // MARK: - Operation types

    /// A `records/modify` operation's `operationType`.
    public static func operationType(_ kind: OperationKind) -> String {
        switch kind {
        case .create: "create"
        case .update: "update"
        case .forceUpdate: "forceUpdate"
        case .replace: "replace"
        case .forceReplace: "forceReplace"
        case .delete: "delete"
        case .forceDelete: "forceDelete"
        }
    }

    /// Reads a `records/modify` `operationType`; nil for any other word.
    public static func operationKind(_ word: String) -> OperationKind? {
        OperationKind.allCases.first { operationType($0) == word }
    }

    /// A `zones/modify` operation's `operationType`.
    public static func zoneOperationType(_ kind: ZoneOperation.Kind) -> String {
        switch kind {
        case .create: "create"
        case .delete: "delete"
        }
    }

    /// Reads a `zones/modify` `operationType`; nil for any other word.
    public static func zoneOperationKind(_ word: String) -> ZoneOperation.Kind? {
        ZoneOperation.Kind.allCases.first { zoneOperationType($0) == word }
    }

    /// A `subscriptions/modify` operation's `operationType`.
    public static func subscriptionOperationType(_ kind: SubscriptionOperation.Kind) -> String {
        switch kind {
        case .create: "create"
        case .update: "update"
        case .delete: "delete"
        }
    }

    /// Reads a `subscriptions/modify` `operationType`; nil for any other word.
    public static func subscriptionOperationKind(_ word: String) -> SubscriptionOperation.Kind? {
        SubscriptionOperation.Kind.allCases.first { subscriptionOperationType($0) == word }
    }

    // MARK: - Subscriptions and queries

    /// A subscription's `subscriptionType`.
    public static func subscriptionType(_ kind: Subscription.Kind) -> String {
        switch kind {
        case .query: "query"
        case .zone: "zone"
        case .database: "database"
        }
    }

    /// Reads a `subscriptionType`; nil for any other word.
    public static func subscriptionKind(_ word: String) -> Subscription.Kind? {
        Subscription.Kind.allCases.first { subscriptionType($0) == word }
    }

    /// A filter's `comparator`.
    public static func comparator(_ comparator: QueryFilter.Comparator) -> String {
        switch comparator {
        case .equals: "EQUALS"
        case .notEquals: "NOT_EQUALS"
        case .lessThan: "LESS_THAN"
        case .lessThanOrEquals: "LESS_THAN_OR_EQUALS"
        case .greaterThan: "GREATER_THAN"
        case .greaterThanOrEquals: "GREATER_THAN_OR_EQUALS"
        case .near: "NEAR"
        case .containsAllTokens: "CONTAINS_ALL_TOKENS"
        case .containsAnyTokens: "CONTAINS_ANY_TOKENS"
        case .in: "IN"
        case .notIn: "NOT_IN"
        case .listContains: "LIST_CONTAINS"
        case .notListContains: "NOT_LIST_CONTAINS"
        case .listContainsAny: "LIST_CONTAINS_ANY"
        case .notListContainsAny: "NOT_LIST_CONTAINS_ANY"
        case .beginsWith: "BEGINS_WITH"
        case .notBeginsWith: "NOT_BEGINS_WITH"
        case .listMemberBeginsWith: "LIST_MEMBER_BEGINS_WITH"
        case .notListMemberBeginsWith: "NOT_LIST_MEMBER_BEGINS_WITH"
        case .listContainsAll: "LIST_CONTAINS_ALL"
        case .notListContainsAll: "NOT_LIST_CONTAINS_ALL"
        }
    }

    /// Reads a filter's `comparator`; nil for any other word.
    public static func comparator(_ word: String) -> QueryFilter.Comparator? {
        QueryFilter.Comparator.allCases.first { comparator($0) == word }
    }
}
