import Foundation
import ShareKit

/// A record field on the wire: `{"value": …, "type": "STRING"}`.
///
/// `type` is always written. When reading it may be left out, as Apple's documentation allows: the type is
/// then inferred from the JSON value (string → `STRING`, integer → `INT64`, other number → `DOUBLE`,
/// boolean → `INT64` 0/1, an object with `recordName` → `REFERENCE`, with `latitude` → `LOCATION`, an array
/// → the list type of its elements).
package struct WireField: Sendable, Hashable {
    package var value: FieldValue
    /// Write `INT64` and `DOUBLE` values (and their lists) as JSON strings, as Apple does for a request with
    /// `numbersAsStrings: true` (JavaScript numbers cannot hold every 64-bit integer). Reading accepts both.
    package var numbersAsStrings = false
    /// Whether the value came with its `type`; false when it was inferred from the JSON value, as CloudKit JS
    /// sends values (`{"value": 2}` for a DOUBLE of 2.0). The emulator then settles it to the field's type in
    /// the schema (`SchemaRules.settled`), as Apple's service does.
    package var isTyped = true

    package init(_ value: FieldValue) {
        self.value = value
    }
}

// MARK: - Codable

extension WireField: Codable {
    private enum CodingKeys: String, CodingKey {
        case value, type
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // `{}` is what CloudKit JS sends for a file input left empty: no value at all, which is not a value
        // whose type is unclear. The reference documents no meaning for it, so it is refused as missing.
        guard container.contains(.value) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription:
                        "the field has no value (its dictionary has no \"value\"); give {\"value\": …}, or leave "
                        + "the field out of fields to leave it as it is"))
        }
        if let typeName = try container.decodeIfPresent(String.self, forKey: .type) {
            guard let type = WireSpelling.fieldType(typeName) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .type, in: container,
                    debugDescription: "unknown field type \"\(typeName)\"; expected one of "
                        + WireSpelling.fieldTypeWords.joined(separator: ", "))
            }
            // The common case first, read straight from the container: a batch of 200 records holds about a
            // thousand fields, and a nested decoder for each, or a failed attempt at another JSON type, costs
            // more than the value.
            if let value = Self.plainValue(of: type, in: container) {
                self.value = value
                return
            }
            value = try Self.decodeValue(of: type, from: try container.superDecoder(forKey: .value))
        } else {
            value = try Self.inferValue(from: try container.superDecoder(forKey: .value))
            isTyped = false
        }
    }

    /// A `STRING`, `INT64`, `DOUBLE` or `TIMESTAMP` value written as its plain JSON type; nil for anything
    /// else, which `decodeValue` then reads in all the forms it accepts.
    private static func plainValue(of type: FieldType, in container: KeyedDecodingContainer<CodingKeys>) -> FieldValue?
    {
        switch type {
        case .string: (try? container.decode(String.self, forKey: .value)).map(FieldValue.string)
        case .int64: (try? container.decode(Int64.self, forKey: .value)).map(FieldValue.int64)
        case .double: (try? container.decode(Double.self, forKey: .value)).map(FieldValue.double)
        case .timestamp: (try? container.decode(Int64.self, forKey: .value)).map(FieldValue.timestamp)
        default: nil
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if numbersAsStrings {
            try Self.encodeValue(value, to: container.superEncoder(forKey: .value), numbersAsStrings: true)
            try container.encode(WireSpelling.fieldType(value.type), forKey: .type)
            return
        }
        switch value {
        case .string(let text): try container.encode(text, forKey: .value)
        case .int64(let number): try container.encode(number, forKey: .value)
        case .double(let number): try container.encode(number, forKey: .value)
        case .timestamp(let millis): try container.encode(millis, forKey: .value)
        case .assetID(let text) where WireAsset(assetIDText: text) == nil: try container.encode(text, forKey: .value)
        default: try Self.encodeValue(value, to: container.superEncoder(forKey: .value))
        }
        try container.encode(WireSpelling.fieldType(value.type), forKey: .type)
    }

    static func decodeValue(of type: FieldType, from decoder: any Decoder) throws -> FieldValue {
        if let elementType = type.elementType {
            var list = try decoder.unkeyedContainer()
            var values: [FieldValue] = []
            while !list.isAtEnd {
                values.append(try decodeValue(of: elementType, from: list.superDecoder()))
            }
            return .list(elementType: elementType, values)
        }
        let single = try decoder.singleValueContainer()
        switch type {
        case .string:
            return .string(try single.decode(String.self))
        case .int64:
            if let bool = try? single.decode(Bool.self) { return .int64(bool ? 1 : 0) }
            if let text = try? single.decode(String.self), let number = Int64(text) { return .int64(number) }
            if let number = try? single.decode(Int64.self) { return .int64(number) }
            // Foundation reads `1e300` as an Int64 with an error that names no field: read it as a number, and
            // say what is wrong with it here.
            let number = try single.decode(Double.self)
            guard let whole = Int64(exactly: number) else {
                throw DecodingError.dataCorruptedError(
                    in: single, debugDescription: "INT64 value \(number) is not a whole number that fits in 64 bits")
            }
            return .int64(whole)
        case .double:
            // JSON has no NaN or infinity, but a DOUBLE may come as text ("nan", "inf"), which CloudKit refuses.
            let number: Double
            if let text = try? single.decode(String.self), let parsed = Double(text) {
                number = parsed
            } else {
                number = try single.decode(Double.self)
            }
            guard number.isFinite else {
                throw DecodingError.dataCorruptedError(
                    in: single, debugDescription: "DOUBLE value \(number) is not a finite number")
            }
            return .double(number)
        case .timestamp:
            if let millis = try? single.decode(Int64.self) { return .timestamp(millis) }
            // A fractional number of milliseconds is rounded; one no Int64 holds (1e300) is refused, never
            // converted with a trap.
            let number = try single.decode(Double.self)
            guard number.isFinite, let millis = Int64(exactly: number.rounded()) else {
                throw DecodingError.dataCorruptedError(
                    in: single,
                    debugDescription:
                        "TIMESTAMP value \(number) is out of range: write milliseconds since 1970 as a whole number between \(Int64.min) and \(Int64.max)"
                )
            }
            return .timestamp(millis)
        case .bytes:
            let text = try single.decode(String.self)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(in: single, debugDescription: "BYTES value is not base64")
            }
            return .bytes(data)
        case .reference:
            return .reference(try WireReference(from: decoder).reference)
        case .assetID:
            if let text = try? single.decode(String.self) { return .assetID(text) }
            guard let text = try WireAsset(from: decoder).assetIDText else {
                throw DecodingError.dataCorruptedError(
                    in: single, debugDescription: "ASSETID value has neither downloadURL nor fileChecksum")
            }
            return .assetID(text)
        case .location:
            return .location(try single.decode(Location.self))
        default:
            throw DecodingError.dataCorruptedError(in: single, debugDescription: "unsupported field type \(type)")
        }
    }

    static func inferValue(from decoder: any Decoder) throws -> FieldValue {
        if let single = try? decoder.singleValueContainer() {
            if let text = try? single.decode(String.self) { return .string(text) }
            if let bool = try? single.decode(Bool.self) { return .int64(bool ? 1 : 0) }
            if let number = try? single.decode(Int64.self) { return .int64(number) }
            if let number = try? single.decode(Double.self) { return .double(number) }
        }
        if let reference = try? WireReference(from: decoder) { return .reference(reference.reference) }
        // An upload's `singleFile` dictionary saved as it was answered, as CloudKit JS saves an asset, or an
        // asset dictionary read back.
        if let asset = try? WireAsset(from: decoder), asset.fileChecksum != nil || asset.receipt != nil,
            let text = asset.assetIDText
        {
            return .assetID(text)
        }
        if let location = try? Location(from: decoder) { return .location(location) }
        if var list = try? decoder.unkeyedContainer() {
            var values: [FieldValue] = []
            while !list.isAtEnd {
                values.append(try inferValue(from: list.superDecoder()))
            }
            let types = Set(values.map(\.type))
            guard types.count <= 1 else {
                throw DecodingError.dataCorrupted(
                    .init(
                        codingPath: decoder.codingPath,
                        debugDescription:
                            "a list mixes types (\(types.map(WireSpelling.fieldType).sorted().joined(separator: ", "))); give \"type\""
                    ))
            }
            return .list(elementType: values.first?.type ?? .string, values)
        }
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: decoder.codingPath,
                debugDescription: "cannot tell this field's type from its value; give \"type\""))
    }

    static func encodeValue(_ value: FieldValue, to encoder: any Encoder, numbersAsStrings: Bool = false) throws {
        switch value {
        case .list(_, let values):
            var list = encoder.unkeyedContainer()
            for element in values {
                try encodeValue(element, to: list.superEncoder(), numbersAsStrings: numbersAsStrings)
            }
        case .reference(let reference):
            try WireReference(reference).encode(to: encoder)
        case .location(let location):
            try location.encode(to: encoder)
        case .assetID(let text) where WireAsset(assetIDText: text) != nil:
            if let asset = WireAsset(assetIDText: text) { try asset.encode(to: encoder) }
        default:
            var single = encoder.singleValueContainer()
            switch value {
            case .string(let text): try single.encode(text)
            case .int64(let number) where numbersAsStrings: try single.encode(String(number))
            case .double(let number) where numbersAsStrings: try single.encode(String(number))
            case .int64(let number): try single.encode(number)
            case .double(let number): try single.encode(number)
            case .timestamp(let millis): try single.encode(millis)
            case .bytes(let data): try single.encode(data.base64EncodedString())
            case .assetID(let name): try single.encode(name)
            case .list, .reference, .location: break
            }
        }
    }
}

/// A `REFERENCE` value on the wire: `{recordName, zoneID?, action}`.
package struct WireReference: Codable, Sendable, Hashable {
    package var recordName: String
    package var zoneID: WireZoneID?
    package var action: String?

    package init(_ reference: Reference) {
        recordName = reference.recordName
        zoneID = reference.zoneID.map(WireZoneID.init)
        action = WireSpelling.referenceAction(reference.action)
    }

    /// The reference; an unknown or missing action reads as `NONE`.
    package var reference: Reference {
        Reference(
            recordName: recordName, zoneID: zoneID?.zoneID,
            action: action.flatMap(WireSpelling.referenceAction) ?? .none)
    }
}
