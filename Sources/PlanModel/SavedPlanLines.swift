import Foundation
import ShareKit

// The lines of a saved plan (Docs/Plans.md, "The saved-plan file"), both ways in one file: written by hand
// (`SavedPlanOutput`), read by hand (`JSONCursor`, in JSONCursor+SavedPlan.swift), and the header and the few
// parts Foundation reads by the `Decodable` types beside them.

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
