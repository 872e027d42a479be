import Foundation

/// The CloudKit type of a field, spelled as Web Services spells it.
public enum FieldType: String, Sendable, Hashable, Codable, CaseIterable {
    case string = "STRING"
    case int64 = "INT64"
    case double = "DOUBLE"
    case timestamp = "TIMESTAMP"
    case bytes = "BYTES"
    case reference = "REFERENCE"
    case assetID = "ASSETID"
    case location = "LOCATION"
    case stringList = "STRING_LIST"
    case int64List = "INT64_LIST"
    case doubleList = "DOUBLE_LIST"
    case timestampList = "TIMESTAMP_LIST"
    case bytesList = "BYTES_LIST"
    case referenceList = "REFERENCE_LIST"
    case locationList = "LOCATION_LIST"
    case assetIDList = "ASSETID_LIST"

    /// The list type whose elements have this type, or nil for a list type.
    public var listType: FieldType? {
        switch self {
        case .string: .stringList
        case .int64: .int64List
        case .double: .doubleList
        case .timestamp: .timestampList
        case .bytes: .bytesList
        case .reference: .referenceList
        case .location: .locationList
        case .assetID: .assetIDList
        default: nil
        }
    }

    /// The element type of a list type, or nil for a scalar type.
    public var elementType: FieldType? {
        FieldType.allCases.first { $0.listType == self }
    }
}

/// What happens to a record when the record its reference points to is deleted.
public enum ReferenceAction: String, Sendable, Hashable, Codable, CaseIterable {
    case none = "NONE"
    case deleteSelf = "DELETE_SELF"
    case validate = "VALIDATE"
}

/// A `REFERENCE` value: a record in the same database, and what its deletion does to the referrer.
public struct Reference: Sendable, Hashable, Codable {
    public var recordName: String
    /// The zone of the target; nil means the zone of the record that holds the reference.
    public var zoneID: ZoneID?
    public var action: ReferenceAction

    public init(recordName: String, zoneID: ZoneID? = nil, action: ReferenceAction = .none) {
        self.recordName = recordName
        self.zoneID = zoneID
        self.action = action
    }
}

/// A `LOCATION` value.
public struct Location: Sendable, Hashable, Codable {
    public var latitude: Double
    public var longitude: Double
    public var horizontalAccuracy: Double?
    public var verticalAccuracy: Double?
    public var altitude: Double?
    public var speed: Double?
    public var course: Double?
    /// Milliseconds since 1970.
    public var timestamp: Int64?

    public init(
        latitude: Double, longitude: Double, horizontalAccuracy: Double? = nil, verticalAccuracy: Double? = nil,
        altitude: Double? = nil, speed: Double? = nil, course: Double? = nil, timestamp: Int64? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.altitude = altitude
        self.speed = speed
        self.course = course
        self.timestamp = timestamp
    }
}

/// The value of one record field, carrying its CloudKit type.
///
/// Only the cases with large payloads are boxed: text, numbers and dates are stored inline rather than each
/// in a heap box of its own (a plan of 100,000 records holds over a million values).
public enum FieldValue: Sendable, Hashable, Codable {
    case string(String)
    case int64(Int64)
    case double(Double)
    /// Milliseconds since 1970, as CloudKit stores timestamps.
    case timestamp(Int64)
    case bytes(Data)
    indirect case reference(Reference)
    case assetID(String)
    indirect case location(Location)
    /// A list of values of one scalar type; `elementType` keeps an empty list typed.
    indirect case list(elementType: FieldType, [FieldValue])

    /// The CloudKit type of this value (`STRING_LIST` for a list of strings).
    public var type: FieldType {
        switch self {
        case .string: .string
        case .int64: .int64
        case .double: .double
        case .timestamp: .timestamp
        case .bytes: .bytes
        case .reference: .reference
        case .assetID: .assetID
        case .location: .location
        case .list(let element, _): element.listType ?? .stringList
        }
    }

    /// A short human rendering, as plans and `show` print it; control characters escaped (`DisplayText`).
    public var displayString: String {
        switch self {
        case .string(let s): return "\"\(DisplayText.escaped(s))\""
        case .int64(let i): return String(i)
        case .double(let d): return String(d)
        case .timestamp(let ms):
            let date = Date(timeIntervalSince1970: Double(ms) / 1000)
            return FieldValue.timestampFormatter.string(from: date)
        case .bytes(let d): return "bytes(\(d.base64EncodedString()))"
        case .reference(let r):
            let zone = r.zoneID.map { "\($0.zoneName)/" } ?? ""
            let action = r.action == .none ? "" : " \(r.action.rawValue)"
            return "ref(\(DisplayText.escaped(zone + r.recordName))\(action))"
        case .assetID(let a): return "asset(\(DisplayText.escaped(AssetValue(text: a)?.displayText ?? a)))"
        case .location(let l): return "location(\(l.latitude), \(l.longitude))"
        case .list(_, let values): return "[" + values.map(\.displayString).joined(separator: ", ") + "]"
        }
    }

    nonisolated(unsafe) private static let timestampFormatter: ISO8601DateFormatter = {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f
    }()
}

extension FieldValue {
    /// The record names this value references with `action` in the zone `zoneName`, lists included; a
    /// reference that names no zone points into the zone of the record that holds it.
    ///
    /// The stores use it to keep `DELETE_SELF` links and to check `VALIDATE` targets, and the planner to write
    /// a `VALIDATE` target before the record that points to it: one reading of what a reference needs.
    public func referencedRecordNames(action: ReferenceAction, inZone zoneName: String) -> [String] {
        switch self {
        case .reference(let r) where r.action == action && (r.zoneID == nil || r.zoneID?.zoneName == zoneName):
            return [r.recordName]
        case .list(_, let values):
            return values.flatMap { $0.referencedRecordNames(action: action, inZone: zoneName) }
        default:
            return []
        }
    }
}
