import ShareKit

/// `records/modify`: `{operations: [{operationType, record}], zoneID?, atomic?, desiredKeys?, numbersAsStrings?}`.
package struct ModifyRecordsRequest: Codable, Sendable, Hashable {
    package struct Operation: Codable, Sendable, Hashable {
        package var operationType: String
        package var record: WireRecord

        package init(operationType: String, record: WireRecord) {
            self.operationType = operationType
            self.record = record
        }
    }

    package var operations: [Operation]
    package var zoneID: WireZoneID?
    package var atomic: Bool?
    package var desiredKeys: [String]?
    package var numbersAsStrings: Bool?

    package init(operations: [Operation], zoneID: WireZoneID?, atomic: Bool?) {
        self.operations = operations
        self.zoneID = zoneID
        self.atomic = atomic
    }

    /// The request for ShareKit operations in one zone. Deletes carry only the record name and change tag.
    package init(_ operations: [RecordOperation], in zoneID: ZoneID, atomic: Bool) {
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
            return Operation(operationType: WireSpelling.operationType(operation.kind), record: record)
        }
        self.zoneID = WireZoneID(zoneID)
        // CloudKit refuses `atomic: true` in a default zone whatever the batch (`ModifyRules`); a batch of one
        // operation is that operation, atomic or not, so the flag is left out. Several operations keep it, and
        // are refused there as the embedded store refuses them.
        let refusedHere = ModifyRules.atomicInDefaultZone(zoneID) != nil
        self.atomic = atomic && refusedHere && operations.count <= 1 ? nil : atomic
    }
}

/// `records/lookup`: `{records: [{recordName}], zoneID?, desiredKeys?, numbersAsStrings?}`. The live service
/// also takes `records` as one dictionary, `{recordName}`, for a lookup of one record; it is read as a list of
/// one.
package struct LookupRecordsRequest: Codable, Sendable, Hashable {
    package var records: [WireRecordPointer]
    package var zoneID: WireZoneID?
    package var desiredKeys: [String]?
    package var numbersAsStrings: Bool?

    package init(recordNames: [String], zoneID: ZoneID) {
        records = recordNames.map { WireRecordPointer(recordName: $0) }
        self.zoneID = WireZoneID(zoneID)
    }

    package init(records: [WireRecordPointer], zoneID: WireZoneID?, desiredKeys: [String]?, numbersAsStrings: Bool?) {
        self.records = records
        self.zoneID = zoneID
        self.desiredKeys = desiredKeys
        self.numbersAsStrings = numbersAsStrings
    }
}

/// `records/query`: `{zoneID?, zoneWide?, query: {recordType, filterBy, sortBy}, resultsLimit?,
/// continuationMarker?, desiredKeys?, numbersAsStrings?}`.
package struct QueryRecordsRequest: Codable, Sendable, Hashable {
    package struct Query: Codable, Sendable, Hashable {
        package var recordType: String
        package var filterBy: [Filter]?
        package var sortBy: [Sort]?
    }

    /// The reference's Filter Dictionary. A system field is named by `systemFieldName` instead of `fieldName`
    /// (`systemFields`); it is read as the field's own name, as a schema's indexes name it.
    package struct Filter: Sendable, Hashable {
        package var comparator: String
        package var fieldName: String
        package var fieldValue: WireField
        /// For `NEAR`: metres.
        package var distance: Double?
    }

    /// The reference's Sort Descriptor Dictionary; `systemFieldName` as in a filter.
    package struct Sort: Sendable, Hashable {
        package var fieldName: String
        package var ascending: Bool?
        /// For a `LOCATION` field: sort by distance from here.
        package var relativeLocation: Location?
    }

    package var zoneID: WireZoneID?
    /// Search every zone of the database (ignored when `zoneID` is given, as Apple ignores it).
    package var zoneWide: Bool?
    package var query: Query
    package var resultsLimit: Int?
    package var continuationMarker: String?
    package var desiredKeys: [String]?
    package var numbersAsStrings: Bool?

    package init(_ query: RecordQuery, in zoneID: ZoneID) {
        self.zoneID = WireZoneID(zoneID)
        self.query = Query(
            recordType: query.recordType,
            filterBy: query.filters.isEmpty
                ? nil
                : query.filters.map {
                    Filter(
                        comparator: WireSpelling.comparator($0.comparator), fieldName: $0.fieldName,
                        fieldValue: WireField($0.value),
                        distance: $0.distance)
                },
            sortBy: query.sort.isEmpty
                ? nil
                : query.sort.map {
                    Sort(fieldName: $0.fieldName, ascending: $0.ascending, relativeLocation: $0.relativeLocation)
                }
        )
        resultsLimit = query.resultsLimit
        continuationMarker = query.continuationMarker
    }

    /// The ShareKit query this request asks.
    /// - Throws: `ShareError` (`BAD_REQUEST`) for an unknown comparator.
    package func recordQuery() throws -> RecordQuery {
        let filters = try (query.filterBy ?? []).map { filter in
            guard let comparator = WireSpelling.comparator(filter.comparator) else {
                throw ShareError(
                    .badRequest,
                    "unknown comparator \"\(filter.comparator)\"; expected one of "
                        + QueryFilter.Comparator.allCases.map(WireSpelling.comparator).joined(separator: ", "))
            }
            return QueryFilter(filter.fieldName, comparator, filter.fieldValue.value, distance: filter.distance)
        }
        return RecordQuery(
            recordType: query.recordType, filters: filters,
            sort: (query.sortBy ?? []).map {
                QuerySort($0.fieldName, ascending: $0.ascending ?? true, relativeLocation: $0.relativeLocation)
            },
            resultsLimit: resultsLimit, continuationMarker: continuationMarker)
    }
}

/// The answer to `records/modify`, `records/lookup` and `records/query`: `{records, continuationMarker?}`.
package struct RecordsResponse: Codable, Sendable, Hashable {
    package var records: [WireRecord]
    package var continuationMarker: String?

    package init(records: [WireRecord], continuationMarker: String? = nil) {
        self.records = records
        self.continuationMarker = continuationMarker
    }
}

/// The emulator's answer to `records/modify`, `records/lookup` and `records/query` before it is written: the
/// store's outcomes, and how the request asked for them. `WireRecordWriter` writes a plain saved record
/// straight from the record, and every other outcome as its `entry`.
package struct RecordsAnswer: Sendable {
    package var outcomes: [RecordOutcome]
    /// The caller, whose own participant entry a share's answer carries.
    package var currentUser: UserRecordName
    package var desiredKeys: [String]?
    package var numbersAsStrings: Bool?
    package var continuationMarker: String?
    /// Whether records carry their `zoneID`: a `records/lookup` of the public database's default zone answers
    /// records without one, as the live service does.
    package var listsZoneID: Bool

    package init(
        _ outcomes: [RecordOutcome], currentUser: UserRecordName, desiredKeys: [String]?, numbersAsStrings: Bool?,
        continuationMarker: String? = nil, listsZoneID: Bool = true
    ) {
        self.outcomes = outcomes
        self.currentUser = currentUser
        self.desiredKeys = desiredKeys
        self.numbersAsStrings = numbersAsStrings
        self.continuationMarker = continuationMarker
        self.listsZoneID = listsZoneID
    }

    /// One outcome as the answer's entry.
    package func entry(_ outcome: RecordOutcome) -> WireRecord {
        var entry = WireRecord(outcome, currentUser: currentUser).answering(
            desiredKeys: desiredKeys, numbersAsStrings: numbersAsStrings
        ).asAnswered()
        if !listsZoneID { entry.zoneID = nil }
        return entry
    }
}

// MARK: - Codable

extension LookupRecordsRequest {
    private enum CodingKeys: String, CodingKey {
        case records, zoneID, desiredKeys, numbersAsStrings
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let one = try? container.decode(WireRecordPointer.self, forKey: .records) {
            records = [one]
        } else {
            records = try container.decode([WireRecordPointer].self, forKey: .records)
        }
        zoneID = try container.decodeIfPresent(WireZoneID.self, forKey: .zoneID)
        desiredKeys = try container.decodeIfPresent([String].self, forKey: .desiredKeys)
        numbersAsStrings = try container.decodeIfPresent(Bool.self, forKey: .numbersAsStrings)
    }
}

extension QueryRecordsRequest {
    /// The system fields a query may name with `systemFieldName`, as the reference's records/query lists them,
    /// and the field each stands for. `recordName` stays as it is: the stores read it as the record's name and
    /// refuse it, unindexed, in Apple's words ("Field 'recordName' is not marked queryable").
    package static let systemFields: [String: String] = [
        "recordName": "recordName", "share": "___share", "parent": "___parent",
        "createdUserRecordName": "___createdBy", "createdTimestamp": "___createTime",
        "modifiedTimestamp": "___modTime", "modifiedUserRecordName": "___modifiedBy",
    ]

    fileprivate enum FieldNameKeys: String, CodingKey {
        case fieldName, systemFieldName
    }

    /// `fieldName`, or the field a `systemFieldName` stands for.
    fileprivate static func fieldName(in decoder: any Decoder) throws -> String {
        let container = try decoder.container(keyedBy: FieldNameKeys.self)
        guard let system = try container.decodeIfPresent(String.self, forKey: .systemFieldName) else {
            return try container.decode(String.self, forKey: .fieldName)
        }
        guard let name = systemFields[system] else {
            throw DecodingError.dataCorruptedError(
                forKey: .systemFieldName, in: container,
                debugDescription: "unknown systemFieldName \"\(system)\"; expected one of "
                    + systemFields.keys.sorted().joined(separator: ", ") + ", or a fieldName")
        }
        return name
    }
}

extension QueryRecordsRequest.Filter: Codable {
    private enum CodingKeys: String, CodingKey {
        case comparator, fieldName, fieldValue, distance
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        comparator = try container.decode(String.self, forKey: .comparator)
        fieldName = try QueryRecordsRequest.fieldName(in: decoder)
        fieldValue = try container.decode(WireField.self, forKey: .fieldValue)
        distance = try container.decodeIfPresent(Double.self, forKey: .distance)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(comparator, forKey: .comparator)
        try container.encode(fieldName, forKey: .fieldName)
        try container.encode(fieldValue, forKey: .fieldValue)
        try container.encodeIfPresent(distance, forKey: .distance)
    }
}

extension QueryRecordsRequest.Sort: Codable {
    private enum CodingKeys: String, CodingKey {
        case fieldName, ascending, relativeLocation
    }

    /// `relativeLocation` is a field-value dictionary, `{"value": {"latitude", "longitude"}, "type":
    /// "LOCATION"}`, as the reference's Sort Descriptor Dictionary has it; a bare location dictionary, as
    /// sharelane's client wrote it before, is read too.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        fieldName = try QueryRecordsRequest.fieldName(in: decoder)
        ascending = try container.decodeIfPresent(Bool.self, forKey: .ascending)
        guard container.contains(.relativeLocation), !(try container.decodeNil(forKey: .relativeLocation)) else {
            return
        }
        if let location = try? container.decode(Location.self, forKey: .relativeLocation) {
            relativeLocation = location
            return
        }
        let field = try container.decode(WireField.self, forKey: .relativeLocation)
        guard case .location(let location) = field.value else {
            throw DecodingError.dataCorruptedError(
                forKey: .relativeLocation, in: container,
                debugDescription:
                    "relativeLocation is a LOCATION field value: {\"value\": {\"latitude\": …, \"longitude\": …}, "
                    + "\"type\": \"LOCATION\"}")
        }
        relativeLocation = location
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(fieldName, forKey: .fieldName)
        try container.encodeIfPresent(ascending, forKey: .ascending)
        try container.encodeIfPresent(relativeLocation.map { WireField(.location($0)) }, forKey: .relativeLocation)
    }
}
