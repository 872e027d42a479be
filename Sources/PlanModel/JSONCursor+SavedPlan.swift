import Foundation
import JSONText
import ShareKit

/// What a saved plan's line holds that is JSON but not what such a line holds (a member missing, a word
/// no type has): thrown where it is found, its place given by the line reader.
struct SavedPlanFault: Error {
    var fault = "it is not what a saved plan's line holds"

    init(_ fault: String? = nil) {
        if let fault { self.fault = fault }
    }
}

// MARK: - Reading the many lines by hand

/// A saved plan's lines are few shapes, read here directly into the plan's types: Foundation's decoder read
/// the changes of 20,000 records at well under a megabyte a second on the 2-core machine (its keyed
/// containers look up generic metadata for every value), slower than planning them again.
extension JSONCursor {
    mutating func strings() throws -> [String] {
        try array { try $0.string() }
    }

    mutating func stringMap() throws -> [String: String] {
        var map: [String: String] = [:]
        try object { input, key in map[key] = try input.string() }
        return map
    }

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
        guard let zoneName, let exists else { throw SavedPlanFault("a zone's line needs its `zoneName` and `exists`") }
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
        guard let zone else { throw SavedPlanFault() }
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
                guard let type = FieldType(rawValue: try input.string()) else { throw SavedPlanFault() }
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
        guard let typeName, let valueAt else { throw SavedPlanFault() }
        let end = offset
        offset = valueAt
        defer { offset = end }
        return try bareValue(typeName: typeName, elementType: elementType)
    }

    private mutating func bareValue(typeName: String, elementType: FieldType?) throws -> FieldValue {
        if typeName == "LIST" {
            guard let elementType else { throw SavedPlanFault() }
            var values: [FieldValue] = []
            try eachElement { values.append(try $0.fieldValue()) }
            return .list(elementType: elementType, values)
        }
        guard let type = FieldType(rawValue: typeName) else { throw SavedPlanFault() }
        if let element = FieldType.allCases.first(where: { $0.listType == type }) {
            var values: [FieldValue] = []
            try eachElement { values.append(try $0.bare(element)) }
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
        case .double: return .double(try savedDouble())
        case .bytes:
            guard let data = Data(base64Encoded: try string()) else { throw SavedPlanFault() }
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
                    guard let read = ReferenceAction(rawValue: try input.string()) else { throw SavedPlanFault() }
                    action = read
                default: try input.skipValue()
                }
            }
            guard let recordName else { throw SavedPlanFault() }
            return .reference(Reference(recordName: recordName, zoneID: zoneID, action: action))
        case .location:
            var numbers: [String: Double] = [:]
            var timestamp: Int64?
            try object { input, key in
                if key == "timestamp" {
                    timestamp = try input.integer()
                } else {
                    numbers[key] = try input.savedDouble()
                }
            }
            guard let latitude = numbers["latitude"], let longitude = numbers["longitude"] else {
                throw SavedPlanFault()
            }
            return .location(
                Location(
                    latitude: latitude, longitude: longitude, horizontalAccuracy: numbers["horizontalAccuracy"],
                    verticalAccuracy: numbers["verticalAccuracy"], altitude: numbers["altitude"],
                    speed: numbers["speed"], course: numbers["course"], timestamp: timestamp))
        default:
            throw SavedPlanFault()
        }
    }

    /// A double as `SavedPlanOutput.double` writes it: a number, or the string that names NaN or an infinity.
    private mutating func savedDouble() throws -> Double {
        guard try peek() == UInt8(ascii: "\"") else { return try double() }
        let start = offset
        guard let value = JSONNumber.nonFinite(named: try string()) else {
            throw fault("expected a number, or `\"NaN\"`, `\"Infinity\"` or `\"-Infinity\"`", at: start)
        }
        return value
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
        guard let zoneName else { throw SavedPlanFault() }
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
                guard let read = PlannedChange.Action(rawValue: try input.string()) else { throw SavedPlanFault() }
                action = read
            case "kind":
                guard let read = PlannedChange.Kind(rawValue: try input.string()) else { throw SavedPlanFault() }
                kind = read
            case "address": address = try input.string()
            case "database":
                guard let read = DatabaseScope(rawValue: try input.string()) else { throw SavedPlanFault() }
                database = read
            case "zoneName": zoneName = try input.string()
            case "recordName": recordName = try input.string()
            case "record": record = try input.record()
            case "attributes":
                var read: [(name: String, isField: Bool, before: PlannedValue?, after: PlannedValue??)] = []
                try input.eachElement { input in read.append(try input.attribute()) }
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
            throw SavedPlanFault("a change's line needs its `action`, `kind` and `zoneName`")
        }
        let planned = record.map {
            PlannedRecord(
                recordType: $0.type, parent: $0.parent, fields: $0.fields,
                operation: $0.operation ?? OperationKind(rawValue: action.rawValue) ?? .create)
        }
        if address == nil, kind == .record, let recordName {
            address = PlannedChange.recordAddress(database: database, zoneName: zoneName, recordName: recordName)
        }
        guard let address else { throw SavedPlanFault("a change to anything but a record needs its `address`") }
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
                guard let read = OperationKind(rawValue: try input.string()) else { throw SavedPlanFault() }
                operation = read
            case "fields": try input.object { input, name in fields[name] = try input.plannedValue() }
            default: try input.skipValue()
            }
        }
        guard let type else { throw SavedPlanFault() }
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
        guard let name else { throw SavedPlanFault() }
        return (name, isField, before, after)
    }
}
