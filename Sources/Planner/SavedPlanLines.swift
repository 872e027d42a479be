import Foundation
import ShareKit

// The lines of a saved plan (Docs/Plans.md, "The saved-plan file"), both ways in one file: written by hand
// (`SavedPlanOutput`), read by hand (`SavedPlanInput`), and the header and the few parts Foundation reads by the
// `Decodable` types beside them.

// MARK: - What a change's line leaves out

extension PlannedChange {
    /// The address a record change has unless told otherwise: `record Lists/milk`, `record (public)/card`.
    static func recordAddress(database: DatabaseScope, zoneName: String, recordName: String) -> String {
        database == .public ? "record (public)/\(recordName)" : "record \(zoneName)/\(recordName)"
    }

    /// The attributes a record's creation shows, all of them read from the record it writes (its type, its
    /// parent, each field by name), as the planner makes them; empty for any other change. A saved change
    /// whose attributes are these leaves them out: a created record is written once, not twice.
    static func derivedAttributes(kind: Kind, action: Action, record: PlannedRecord?) -> [AttributeChange] {
        guard kind == .record, action == .create, let record else { return [] }
        var attributes = [AttributeChange(name: "type", isField: false, before: nil, after: .text(record.recordType))]
        attributes.reserveCapacity(2 + record.fields.count)
        if let parent = record.parent {
            attributes.append(AttributeChange(name: "parent", isField: false, before: nil, after: .text(parent)))
        }
        for name in record.fields.keys.sorted() {
            attributes.append(AttributeChange(name: name, isField: true, before: nil, after: record.fields[name]))
        }
        return attributes
    }

    /// Whether the change's attributes are `derivedAttributes`, found without making them: a plan of 100,000
    /// created records asks it of each.
    var hasDerivedAttributes: Bool {
        guard kind == .record, action == .create, let record else { return attributes.isEmpty }
        let parents = record.parent == nil ? 0 : 1
        guard attributes.count == 1 + parents + record.fields.count,
            attributes[0] == AttributeChange(name: "type", isField: false, before: nil, after: .text(record.recordType))
        else { return false }
        if let parent = record.parent,
            attributes[1] != AttributeChange(name: "parent", isField: false, before: nil, after: .text(parent))
        {
            return false
        }
        // As many fields as the record has, each one of them, in ascending order: the record's names sorted.
        var previous: String?
        for attribute in attributes[(1 + parents)...] {
            guard attribute.isField, attribute.before == nil, let value = record.fields[attribute.name],
                attribute.after == value, previous.map({ $0 < attribute.name }) ?? true
            else { return false }
            previous = attribute.name
        }
        return true
    }

    /// The `after` of a field attribute when its line leaves it out: the value the record writes, or nil.
    static func impliedAfter(of name: String, isField: Bool, record: PlannedRecord?) -> PlannedValue? {
        isField ? record?.fields[name] : nil
    }
}

// MARK: - Writing

extension SavedPlanOutput {
    /// One change: `{"action": "create", "kind": "record", "zoneName": …, "recordName": …, "record": {…}}`.
    /// The address, the attributes of a created record, a field's `after` that the record writes, the private
    /// database and an operation that is the change's action are left out: the reader puts them back.
    mutating func change(_ change: PlannedChange, encoder: JSONEncoder) throws {
        openObject()
        key("action")
        string(change.action.rawValue)
        key("kind")
        string(change.kind.rawValue)
        if change.kind != .record
            || change.recordName.map({
                PlannedChange.recordAddress(database: change.database, zoneName: change.zoneName, recordName: $0)
            }) != change.address
        {
            key("address")
            string(change.address)
        }
        if change.database != .private {
            key("database")
            string(change.database.rawValue)
        }
        key("zoneName")
        string(change.zoneName)
        if let recordName = change.recordName {
            key("recordName")
            string(recordName)
        }
        if let record = change.record {
            key("record")
            openObject()
            key("recordType")
            string(record.recordType)
            if let parent = record.parent {
                key("parent")
                string(parent)
            }
            if record.operation.rawValue != change.action.rawValue {
                key("operation")
                string(record.operation.rawValue)
            }
            key("fields")
            fields(record.fields)
            closeObject()
        }
        if !change.hasDerivedAttributes {
            key("attributes")
            openArray()
            for attribute in change.attributes {
                openObject()
                key("name")
                string(attribute.name)
                if attribute.isField {
                    key("field")
                    bool(true)
                }
                if let before = attribute.before {
                    key("before")
                    plannedValue(before)
                }
                if attribute.after
                    != PlannedChange.impliedAfter(of: attribute.name, isField: attribute.isField, record: change.record)
                {
                    key("after")
                    if let after = attribute.after { plannedValue(after) } else { null() }
                }
                closeObject()
            }
            closeArray()
        }
        if let share = change.share {
            key("share")
            json(try encoder.encode(share))
        }
        if let participant = change.participant {
            key("participant")
            json(try encoder.encode(participant))
        }
        if let subscription = change.subscription {
            key("subscription")
            self.subscription(subscription)
        }
        if let tag = change.baseChangeTag {
            key("recordChangeTag")
            string(tag)
        }
        if let count = change.deletedRecordCount {
            key("deletedRecordCount")
            integer(Int64(count))
        }
        if let onlyAccepts = change.onlyAccepts {
            key("onlyAccepts")
            bool(onlyAccepts)
        }
        closeObject()
    }

    /// A subscription as CloudKit names its parts, with its filters' values typed as record fields are.
    mutating func subscription(_ planned: PlannedSubscription) {
        let subscription = planned.subscription
        openObject()
        key("handle")
        string(planned.handle)
        key("database")
        string(planned.database.rawValue)
        key("subscriptionID")
        string(subscription.subscriptionID)
        key("subscriptionType")
        string(subscription.kind.rawValue)
        if let recordType = subscription.recordType {
            key("recordType")
            string(recordType)
        }
        if !subscription.filters.isEmpty {
            key("filterBy")
            openArray()
            for filter in subscription.filters {
                openObject()
                key("fieldName")
                string(filter.fieldName)
                key("comparator")
                string(filter.comparator.rawValue)
                key("fieldValue")
                fieldValue(filter.value)
                if let distance = filter.distance {
                    key("distance")
                    double(distance)
                }
                closeObject()
            }
            closeArray()
        }
        if let zone = subscription.zoneID {
            key("zoneID")
            zoneID(zone)
        }
        key("zoneWide")
        bool(subscription.zoneWide)
        key("firesOn")
        strings(subscription.firesOn.map(\.rawValue))
        key("firesOnce")
        bool(subscription.firesOnce)
        if let alert = subscription.alertBody {
            key("alertBody")
            string(alert)
        }
        closeObject()
    }
}

// MARK: - Reading

/// The first line: the format's version, what the plan is of, and how many lines of each part follow.
struct SavedPlanHeader: Decodable {
    var recipe: String
    var store: String
    var container: String?
    var environment: CloudKitEnvironment?
    var owner: PlannedUser
    var users: [PlannedUser]
    var notes: [String]
    var waiting: [String]
    var access: PlanAccess?
    var schema: PlannedSchema?
    var rearm: [SavedSubscription]?
    var assetFiles: [String: String]?
    var generatedNames: [String: [String]]?
    /// The owners of the zones the plan's owner does not own (a recipe with several owners).
    var zoneOwners: [String: String]?
    /// The store the plan was made against, by what identifies it (`plan --out` always names it).
    var storeIdentity: SavedPlanStore?
    /// How many zone lines and change lines follow.
    var zones: Int
    var changes: Int
}

/// Only the version, read first: a file of another version is refused by it, whatever else it holds.
struct SavedPlanVersion: Decodable {
    var sharelane_saved_plan: Int
}

/// The public records the plan looked up, and the change tags of those that existed.
struct SavedPublicBasis: Decodable {
    var publicRecordNames: [String]
    var recordChangeTags: [String: String]
}

/// The last line.
struct SavedPlanDigest: Decodable {
    var digest: String
    /// `hmac-sha256:HEX` of the same bytes as the digest, with `SHARELANE_PLAN_KEY`, when it was set.
    var signature: String?
}

/// A field value, written by `SavedPlanOutput.fieldValue`.
struct SavedFieldValue: Decodable {
    var value: FieldValue

    enum CodingKeys: String, CodingKey { case type, elementType, value }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let typeName = try c.decode(String.self, forKey: .type)
        if typeName == "LIST" {
            value = .list(
                elementType: try c.decode(FieldType.self, forKey: .elementType),
                try c.decode([SavedFieldValue].self, forKey: .value).map(\.value))
            return
        }
        guard let type = FieldType(rawValue: typeName) else {
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: c, debugDescription: "\(typeName) is not a CloudKit field type")
        }
        if let element = FieldType.allCases.first(where: { $0.listType == type }) {
            var list = try c.nestedUnkeyedContainer(forKey: .value)
            var values: [FieldValue] = []
            values.reserveCapacity(list.count ?? 0)
            while !list.isAtEnd { values.append(try Self.bare(element, try list.superDecoder())) }
            value = .list(elementType: element, values)
        } else {
            value = try Self.bare(type, try c.superDecoder(forKey: .value))
        }
    }

    private struct SavedReference: Decodable {
        var recordName: String
        var zoneID: ZoneID?
        var action: ReferenceAction
    }

    private static func bare(_ type: FieldType, _ decoder: any Decoder) throws -> FieldValue {
        let single = try decoder.singleValueContainer()
        switch type {
        case .string: return .string(try single.decode(String.self))
        case .int64: return .int64(try single.decode(Int64.self))
        case .timestamp: return .timestamp(try single.decode(Int64.self))
        case .assetID: return .assetID(try single.decode(String.self))
        case .double:
            if let number = try? single.decode(Double.self) { return .double(number) }
            switch try single.decode(String.self) {
            case "NaN": return .double(.nan)
            case "Infinity": return .double(.infinity)
            case "-Infinity": return .double(-.infinity)
            default: throw DecodingError.dataCorruptedError(in: single, debugDescription: "not a DOUBLE")
            }
        case .bytes:
            guard let data = Data(base64Encoded: try single.decode(String.self)) else {
                throw DecodingError.dataCorruptedError(in: single, debugDescription: "BYTES that are not base64")
            }
            return .bytes(data)
        case .reference:
            let reference = try single.decode(SavedReference.self)
            return .reference(
                Reference(recordName: reference.recordName, zoneID: reference.zoneID, action: reference.action))
        case .location: return .location(try single.decode(Location.self))
        default:
            throw DecodingError.dataCorruptedError(in: single, debugDescription: "a list inside a list")
        }
    }
}

/// A subscription, written by `SavedPlanOutput.subscription`.
struct SavedSubscription: Decodable {
    var planned: PlannedSubscription

    enum CodingKeys: String, CodingKey {
        case handle, database, subscriptionID, subscriptionType, recordType, filterBy, zoneID, zoneWide, firesOn
        case firesOnce, alertBody
    }
    struct Filter: Decodable {
        var fieldName: String
        var comparator: QueryFilter.Comparator
        var fieldValue: SavedFieldValue
        var distance: Double?
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        planned = PlannedSubscription(
            handle: try c.decode(String.self, forKey: .handle),
            database: try c.decode(DatabaseScope.self, forKey: .database),
            subscription: Subscription(
                subscriptionID: try c.decode(String.self, forKey: .subscriptionID),
                kind: try c.decode(Subscription.Kind.self, forKey: .subscriptionType),
                recordType: try c.decodeIfPresent(String.self, forKey: .recordType),
                filters: (try c.decodeIfPresent([Filter].self, forKey: .filterBy) ?? []).map {
                    QueryFilter($0.fieldName, $0.comparator, $0.fieldValue.value, distance: $0.distance)
                },
                zoneID: try c.decodeIfPresent(ZoneID.self, forKey: .zoneID),
                zoneWide: try c.decode(Bool.self, forKey: .zoneWide),
                firesOn: try c.decode([Subscription.Trigger].self, forKey: .firesOn),
                firesOnce: try c.decode(Bool.self, forKey: .firesOnce),
                alertBody: try c.decodeIfPresent(String.self, forKey: .alertBody)))
    }
}

// MARK: - Reading the many lines by hand

extension SavedPlanInput {
    /// A zone of the basis: whether it existed, and the change tag of every record and share in it.
    mutating func zoneBasis() throws -> ZoneBasis {
        var zoneName: String?
        var exists: Bool?
        var tags: [String: String] = [:]
        var undeclared: [String]?
        try object { input, key in
            switch key {
            case "zoneName": zoneName = try input.string()
            case "exists": exists = try input.bool()
            case "recordChangeTags": tags = try input.stringMap()
            case "undeclared": undeclared = try input.strings()
            default: try input.skipValue()
            }
        }
        guard let zoneName, let exists else { throw Unreadable("a zone's line needs its `zoneName` and `exists`") }
        var basis = ZoneBasis(zoneName: zoneName, exists: exists, tags: tags)
        basis.undeclared = undeclared
        return basis
    }

    /// A plan's value, written by `SavedPlanOutput.plannedValue`: a string, a share URL (its object's one
    /// key is `shareURL`) or a field value.
    mutating func plannedValue() throws -> PlannedValue {
        if try peek() == UInt8(ascii: "\"") { return .text(try string()) }
        let start = offset
        try expect(UInt8(ascii: "{"))
        let first = try peek() == UInt8(ascii: "\"") ? try string() : ""
        offset = start
        guard first == "shareURL" else { return .value(try fieldValue()) }
        var zone: String?
        var record: String?
        try object { input, _ in
            try input.object { input, key in
                switch key {
                case "zoneName": zone = try input.string()
                case "recordName": record = try input.string()
                default: try input.skipValue()
                }
            }
        }
        guard let zone else { throw Unreadable() }
        return .shareURL(zone: zone, record: record)
    }

    /// A field value, written by `SavedPlanOutput.fieldValue`: its `type`, then its `value` read as that type
    /// says (a `value` before its `type` is read again once the type is known).
    mutating func fieldValue() throws -> FieldValue {
        var typeName: String?
        var elementType: FieldType?
        var valueAt: Int?
        var value: FieldValue?
        try object { input, key in
            switch key {
            case "type": typeName = try input.string()
            case "elementType":
                guard let type = FieldType(rawValue: try input.string()) else { throw Unreadable() }
                elementType = type
            case "value":
                if let typeName, typeName != "LIST" || elementType != nil {
                    value = try input.bareValue(typeName: typeName, elementType: elementType)
                } else {
                    valueAt = input.offset
                    try input.skipValue()
                }
            default: try input.skipValue()
            }
        }
        if let value { return value }
        guard let typeName, let valueAt else { throw Unreadable() }
        let end = offset
        offset = valueAt
        defer { offset = end }
        return try bareValue(typeName: typeName, elementType: elementType)
    }

    private mutating func bareValue(typeName: String, elementType: FieldType?) throws -> FieldValue {
        if typeName == "LIST" {
            guard let elementType else { throw Unreadable() }
            var values: [FieldValue] = []
            try array { values.append(try $0.fieldValue()) }
            return .list(elementType: elementType, values)
        }
        guard let type = FieldType(rawValue: typeName) else { throw Unreadable() }
        if let element = FieldType.allCases.first(where: { $0.listType == type }) {
            var values: [FieldValue] = []
            try array { values.append(try $0.bare(element)) }
            return .list(elementType: element, values)
        }
        return try bare(type)
    }

    private mutating func bare(_ type: FieldType) throws -> FieldValue {
        switch type {
        case .string: return .string(try string())
        case .int64: return .int64(try integer())
        case .timestamp: return .timestamp(try integer())
        case .assetID: return .assetID(try string())
        case .double:
            guard try peek() == UInt8(ascii: "\"") else { return .double(try double()) }
            switch try string() {
            case "NaN": return .double(.nan)
            case "Infinity": return .double(.infinity)
            case "-Infinity": return .double(-.infinity)
            default: throw Unreadable()
            }
        case .bytes:
            guard let data = Data(base64Encoded: try string()) else { throw Unreadable() }
            return .bytes(data)
        case .reference:
            var recordName: String?
            var zoneID: ZoneID?
            var action = ReferenceAction.none
            try object { input, key in
                switch key {
                case "recordName": recordName = try input.string()
                case "zoneID": zoneID = try input.zoneID()
                case "action":
                    guard let read = ReferenceAction(rawValue: try input.string()) else { throw Unreadable() }
                    action = read
                default: try input.skipValue()
                }
            }
            guard let recordName else { throw Unreadable() }
            return .reference(Reference(recordName: recordName, zoneID: zoneID, action: action))
        case .location:
            var numbers: [String: Double] = [:]
            var timestamp: Int64?
            try object { input, key in
                if key == "timestamp" { timestamp = try input.integer() } else { numbers[key] = try input.double() }
            }
            guard let latitude = numbers["latitude"], let longitude = numbers["longitude"] else {
                throw Unreadable()
            }
            return .location(
                Location(
                    latitude: latitude, longitude: longitude, horizontalAccuracy: numbers["horizontalAccuracy"],
                    verticalAccuracy: numbers["verticalAccuracy"], altitude: numbers["altitude"],
                    speed: numbers["speed"], course: numbers["course"], timestamp: timestamp))
        default:
            throw Unreadable()
        }
    }

    mutating func zoneID() throws -> ZoneID {
        var zoneName: String?
        var owner: String?
        try object { input, key in
            switch key {
            case "zoneName": zoneName = try input.string()
            case "ownerRecordName": owner = try input.string()
            default: try input.skipValue()
            }
        }
        guard let zoneName else { throw Unreadable() }
        return owner.map { ZoneID(zoneName: zoneName, ownerRecordName: $0) } ?? ZoneID(zoneName: zoneName)
    }

    /// A change, written by `SavedPlanOutput.change`, with what its line leaves out put back. Shares,
    /// participants and subscriptions, a few in a plan, are read by Foundation's decoder.
    mutating func change(decoder: JSONDecoder) throws -> PlannedChange {
        var action: PlannedChange.Action?
        var kind: PlannedChange.Kind?
        var address: String?
        var database = DatabaseScope.private
        var zoneName: String?
        var recordName: String?
        var record: (type: String, parent: String?, operation: OperationKind?, fields: [String: PlannedValue])?
        var attributes: [(name: String, isField: Bool, before: PlannedValue?, after: PlannedValue??)]?
        var share: PlannedShare?
        var participant: PlannedParticipant?
        var subscription: PlannedSubscription?
        var tag: String?
        var deletedRecordCount: Int?
        var onlyAccepts: Bool?
        try object { input, key in
            switch key {
            case "action":
                guard let read = PlannedChange.Action(rawValue: try input.string()) else { throw Unreadable() }
                action = read
            case "kind":
                guard let read = PlannedChange.Kind(rawValue: try input.string()) else { throw Unreadable() }
                kind = read
            case "address": address = try input.string()
            case "database":
                guard let read = DatabaseScope(rawValue: try input.string()) else { throw Unreadable() }
                database = read
            case "zoneName": zoneName = try input.string()
            case "recordName": recordName = try input.string()
            case "record": record = try input.record()
            case "attributes":
                var read: [(name: String, isField: Bool, before: PlannedValue?, after: PlannedValue??)] = []
                try input.array { input in read.append(try input.attribute()) }
                attributes = read
            case "share":
                let start = input.offset
                try input.skipValue()
                share = try decoder.decode(PlannedShare.self, from: input.data(from: start))
            case "participant":
                let start = input.offset
                try input.skipValue()
                participant = try decoder.decode(PlannedParticipant.self, from: input.data(from: start))
            case "subscription":
                let start = input.offset
                try input.skipValue()
                subscription = try decoder.decode(SavedSubscription.self, from: input.data(from: start)).planned
            case "recordChangeTag": tag = try input.string()
            case "deletedRecordCount": deletedRecordCount = Int(try input.integer())
            case "onlyAccepts": onlyAccepts = try input.bool()
            default: try input.skipValue()
            }
        }
        guard let action, let kind, let zoneName else {
            throw Unreadable("a change's line needs its `action`, `kind` and `zoneName`")
        }
        let planned = record.map {
            PlannedRecord(
                recordType: $0.type, parent: $0.parent, fields: $0.fields,
                operation: $0.operation ?? OperationKind(rawValue: action.rawValue) ?? .create)
        }
        if address == nil, kind == .record, let recordName {
            address = PlannedChange.recordAddress(database: database, zoneName: zoneName, recordName: recordName)
        }
        guard let address else { throw Unreadable("a change to anything but a record needs its `address`") }
        return PlannedChange(
            action: action, kind: kind, address: address, database: database, zoneName: zoneName,
            recordName: recordName,
            attributes: attributes?.map {
                AttributeChange(
                    name: $0.name, isField: $0.isField, before: $0.before,
                    after: $0.after ?? PlannedChange.impliedAfter(of: $0.name, isField: $0.isField, record: planned))
            } ?? PlannedChange.derivedAttributes(kind: kind, action: action, record: planned),
            record: planned, share: share, participant: participant, baseChangeTag: tag,
            deletedRecordCount: deletedRecordCount, onlyAccepts: onlyAccepts, subscription: subscription)
    }

    private mutating func record() throws -> (
        type: String, parent: String?, operation: OperationKind?, fields: [String: PlannedValue]
    ) {
        var type: String?
        var parent: String?
        var operation: OperationKind?
        var fields: [String: PlannedValue] = [:]
        try object { input, key in
            switch key {
            case "recordType": type = try input.string()
            case "parent": parent = try input.string()
            case "operation":
                guard let read = OperationKind(rawValue: try input.string()) else { throw Unreadable() }
                operation = read
            case "fields": try input.object { input, name in fields[name] = try input.plannedValue() }
            default: try input.skipValue()
            }
        }
        guard let type else { throw Unreadable() }
        return (type, parent, operation, fields)
    }

    /// An attribute; its `after` nil when the line leaves it out, `.some(nil)` for `"after": null`.
    private mutating func attribute() throws -> (
        name: String, isField: Bool, before: PlannedValue?, after: PlannedValue??
    ) {
        var name: String?
        var isField = false
        var before: PlannedValue?
        var after: PlannedValue??
        try object { input, key in
            switch key {
            case "name": name = try input.string()
            case "field": isField = try input.bool()
            case "before": before = try input.isNull() ? nil : try input.plannedValue()
            case "after": after = .some(try input.isNull() ? nil : try input.plannedValue())
            default: try input.skipValue()
            }
        }
        guard let name else { throw Unreadable() }
        return (name, isField, before, after)
    }
}
