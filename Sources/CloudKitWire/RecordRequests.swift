import ShareKit

/// `records/modify`: `{operations: [{operationType, record}], zoneID?, atomic?, desiredKeys?, numbersAsStrings?}`.
public struct ModifyRecordsRequest: Codable, Sendable, Hashable {
    public struct Operation: Codable, Sendable, Hashable {
        public var operationType: String
        public var record: WireRecord

        public init(operationType: String, record: WireRecord) {
            self.operationType = operationType
            self.record = record
        }
    }

    public var operations: [Operation]
    public var zoneID: WireZoneID?
    public var atomic: Bool?
    public var desiredKeys: [String]?
    public var numbersAsStrings: Bool?

    public init(operations: [Operation], zoneID: WireZoneID?, atomic: Bool?) {
        self.operations = operations
        self.zoneID = zoneID
        self.atomic = atomic
    }

    /// The request for ShareKit operations in one zone. Deletes carry only the record name and change tag.
    public init(_ operations: [RecordOperation], in zoneID: ZoneID, atomic: Bool) {
        self.operations = operations.map { operation in
            var record: WireRecord
            switch operation.item {
            case .record(let value):
                record = WireRecord(value, includeZoneID: false)
            case .share(let value):
                record = WireRecord(value, includeZoneID: false)
            }
            // Server-written members are not sent.
            record.created = nil
            record.modified = nil
            record.owner = nil
            record.currentUserParticipant = nil
            record.shortGUID = nil
            record.url = nil
            if operation.kind.isDelete {
                let stripped = WireRecord(recordName: record.recordName, recordType: record.recordType)
                var deletion = stripped
                deletion.recordChangeTag = record.recordChangeTag
                record = deletion
            }
            return Operation(operationType: operation.kind.rawValue, record: record)
        }
        self.zoneID = WireZoneID(zoneID)
        self.atomic = atomic
    }
}

/// `records/lookup`: `{records: [{recordName}], zoneID?, desiredKeys?}`.
public struct LookupRecordsRequest: Codable, Sendable, Hashable {
    public var records: [WireRecordPointer]
    public var zoneID: WireZoneID?
    public var desiredKeys: [String]?

    public init(recordNames: [String], zoneID: ZoneID) {
        records = recordNames.map { WireRecordPointer(recordName: $0) }
        self.zoneID = WireZoneID(zoneID)
    }
}

/// `records/query`: `{zoneID?, query: {recordType, filterBy, sortBy}, resultsLimit?, continuationMarker?}`.
public struct QueryRecordsRequest: Codable, Sendable, Hashable {
    public struct Query: Codable, Sendable, Hashable {
        public var recordType: String
        public var filterBy: [Filter]?
        public var sortBy: [Sort]?
    }

    public struct Filter: Codable, Sendable, Hashable {
        public var comparator: String
        public var fieldName: String
        public var fieldValue: WireField
    }

    public struct Sort: Codable, Sendable, Hashable {
        public var fieldName: String
        public var ascending: Bool?
    }

    public var zoneID: WireZoneID?
    public var query: Query
    public var resultsLimit: Int?
    public var continuationMarker: String?
    public var desiredKeys: [String]?

    public init(_ query: RecordQuery, in zoneID: ZoneID) {
        self.zoneID = WireZoneID(zoneID)
        self.query = Query(
            recordType: query.recordType,
            filterBy: query.filters.isEmpty
                ? nil
                : query.filters.map {
                    Filter(comparator: $0.comparator.rawValue, fieldName: $0.fieldName, fieldValue: WireField($0.value))
                },
            sortBy: query.sort.isEmpty ? nil : query.sort.map { Sort(fieldName: $0.fieldName, ascending: $0.ascending) }
        )
        resultsLimit = query.resultsLimit
        continuationMarker = query.continuationMarker
    }

    /// The ShareKit query this request asks.
    /// - Throws: `ShareError` (`BAD_REQUEST`) for an unknown comparator.
    public func recordQuery() throws -> RecordQuery {
        let filters = try (query.filterBy ?? []).map { filter in
            guard let comparator = QueryFilter.Comparator(rawValue: filter.comparator) else {
                throw ShareError(
                    .badRequest,
                    "unknown comparator \"\(filter.comparator)\"; expected one of "
                        + QueryFilter.Comparator.allCases.map(\.rawValue).joined(separator: ", "))
            }
            return QueryFilter(filter.fieldName, comparator, filter.fieldValue.value)
        }
        return RecordQuery(
            recordType: query.recordType, filters: filters,
            sort: (query.sortBy ?? []).map { QuerySort($0.fieldName, ascending: $0.ascending ?? true) },
            resultsLimit: resultsLimit, continuationMarker: continuationMarker)
    }
}

/// The answer to `records/modify`, `records/lookup` and `records/query`: `{records, continuationMarker?}`.
public struct RecordsResponse: Codable, Sendable, Hashable {
    public var records: [WireRecord]
    public var continuationMarker: String?

    public init(records: [WireRecord], continuationMarker: String? = nil) {
        self.records = records
        self.continuationMarker = continuationMarker
    }
}
