/// A query's comparison of one field, with every comparator of Apple's Web Services Reference (and
/// `LIST_CONTAINS_ANY`, which CloudKit JS adds).
public struct QueryFilter: Sendable, Hashable, Codable {
    public enum Comparator: String, Sendable, Hashable, Codable, CaseIterable {
        case equals = "EQUALS"
        case notEquals = "NOT_EQUALS"
        case lessThan = "LESS_THAN"
        case lessThanOrEquals = "LESS_THAN_OR_EQUALS"
        case greaterThan = "GREATER_THAN"
        case greaterThanOrEquals = "GREATER_THAN_OR_EQUALS"
        /// A `LOCATION` within `distance` metres of the filter's location.
        case near = "NEAR"
        /// Every token of the filter's text is among the field's (token search; needs SEARCHABLE).
        case containsAllTokens = "CONTAINS_ALL_TOKENS"
        case containsAnyTokens = "CONTAINS_ANY_TOKENS"
        case `in` = "IN"
        case notIn = "NOT_IN"
        case listContains = "LIST_CONTAINS"
        case notListContains = "NOT_LIST_CONTAINS"
        case listContainsAny = "LIST_CONTAINS_ANY"
        case notListContainsAny = "NOT_LIST_CONTAINS_ANY"
        case beginsWith = "BEGINS_WITH"
        case notBeginsWith = "NOT_BEGINS_WITH"
        case listMemberBeginsWith = "LIST_MEMBER_BEGINS_WITH"
        case notListMemberBeginsWith = "NOT_LIST_MEMBER_BEGINS_WITH"
        case listContainsAll = "LIST_CONTAINS_ALL"
        case notListContainsAll = "NOT_LIST_CONTAINS_ALL"

        /// The index a field needs for this comparator: SORTABLE for ranges, SEARCHABLE for tokens,
        /// QUERYABLE for the rest.
        public var neededIndex: SchemaIndexes {
            switch self {
            case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals: .sortable
            case .containsAllTokens, .containsAnyTokens: .searchable
            default: .queryable
            }
        }

        /// Whether the filter's value is a list of candidates (`IN`, `LIST_CONTAINS_ALL`, …) rather than one value.
        public var takesList: Bool {
            switch self {
            case .in, .notIn, .listContainsAny, .notListContainsAny, .listContainsAll, .notListContainsAll: true
            default: false
            }
        }
    }

    public var comparator: Comparator
    public var fieldName: String
    public var value: FieldValue
    /// For `NEAR`: the distance in metres.
    public var distance: Double?

    public init(_ fieldName: String, _ comparator: Comparator, _ value: FieldValue, distance: Double? = nil) {
        self.comparator = comparator
        self.fieldName = fieldName
        self.value = value
        self.distance = distance
    }

    /// What makes this filter one CloudKit refuses (`NEAR` without a location and a distance, a token search
    /// without text), or nil.
    public var problem: String? {
        switch comparator {
        case .near:
            guard case .location = value else {
                return "filter on '\(fieldName)': NEAR compares a LOCATION field with a location value"
            }
            guard let distance, distance.isFinite, distance >= 0 else {
                return "filter on '\(fieldName)': NEAR needs a distance in metres (\"distance\": 1000)"
            }
        case .containsAllTokens, .containsAnyTokens:
            guard case .string = value else {
                return "filter on '\(fieldName)': \(comparator.rawValue) takes a STRING of words to search for"
            }
        case .beginsWith, .notBeginsWith, .listMemberBeginsWith, .notListMemberBeginsWith:
            guard case .string = value else {
                return "filter on '\(fieldName)': \(comparator.rawValue) takes a STRING prefix"
            }
        default:
            break
        }
        return nil
    }
}

/// A sort key of a query.
public struct QuerySort: Sendable, Hashable, Codable {
    public var fieldName: String
    public var ascending: Bool
    /// For a `LOCATION` field: sort by distance from this location.
    public var relativeLocation: Location?

    public init(_ fieldName: String, ascending: Bool = true, relativeLocation: Location? = nil) {
        self.fieldName = fieldName
        self.ascending = ascending
        self.relativeLocation = relativeLocation
    }
}

/// A `records/query` request.
public struct RecordQuery: Sendable, Hashable, Codable {
    public var recordType: String
    public var filters: [QueryFilter]
    public var sort: [QuerySort]
    /// At most this many records a page (CloudKit's limit is 200).
    public var resultsLimit: Int?
    public var continuationMarker: String?

    public init(
        recordType: String, filters: [QueryFilter] = [], sort: [QuerySort] = [], resultsLimit: Int? = nil,
        continuationMarker: String? = nil
    ) {
        self.recordType = recordType
        self.filters = filters
        self.sort = sort
        self.resultsLimit = resultsLimit
        self.continuationMarker = continuationMarker
    }
}

/// One page of query results.
public struct QueryPage: Sendable, Hashable, Codable {
    public var records: [Record]
    /// Pass back in the query for the next page; nil on the last page.
    public var continuationMarker: String?

    public init(records: [Record], continuationMarker: String?) {
        self.records = records
        self.continuationMarker = continuationMarker
    }
}
