import Foundation
import Testing

@testable import ShareKit

/// The packed form of fields, as the SQLite store keeps them and hands them to a `RecordReceiver`.
@Suite("Packed fields")
struct PackedFieldsTests {
    static let fields: [String: FieldValue] = [
        "title": .string("Milk \"2%\" é 🐑"), "empty": .string(""), "qty": .int64(.min), "price": .double(-0.0),
        "when": .timestamp(1_700_000_000_000), "file": .assetID("a#b"), "raw": .bytes(Data([0, 1, 255])),
        "to": .reference(
            Reference(recordName: "parent", zoneID: ZoneID(zoneName: "Z", ownerRecordName: "_o"), action: .deleteSelf)),
        "at": .location(Location(latitude: 1.5, longitude: -2)),
        "tags": .list(elementType: .string, [.string("a"), .string("b")]),
    ]

    @Test("fields packed read back as they were, every kind of value")
    func roundTrip() throws {
        #expect(try PackedFields.unpack(PackedFields.pack(Self.fields)) == Self.fields)
        #expect(try PackedFields.unpack(PackedFields.pack([:])) == [:])
    }

    @Test("each field is handed over in name order: strings as their bytes, numbers as they are, others unpacked")
    func eachField() throws {
        var seen: [(String, String)] = []
        try PackedFields.pack(Self.fields).withUnsafeBytes { bytes in
            try PackedFields.forEach(bytes) { name, value in
                let kind: String
                switch value {
                case .string(let text): kind = "string " + String(decoding: text, as: UTF8.self)
                case .int64(let number): kind = "int64 \(number)"
                case .double(let number): kind = "double \(number)"
                case .timestamp(let number): kind = "timestamp \(number)"
                case .other(let value): kind = "other \(value.type.rawValue)"
                }
                seen.append((String(decoding: name, as: UTF8.self), kind))
            }
        }
        #expect(seen.map(\.0) == Self.fields.keys.sorted())
        #expect(
            seen.map(\.1) == [
                "other LOCATION", "string ", "other ASSETID", "double -0.0", "int64 \(Int64.min)",
                "other BYTES", "other STRING_LIST", "string Milk \"2%\" é 🐑", "other REFERENCE",
                "timestamp 1700000000000",
            ])
    }

    @Test("bytes that are not packed fields are refused, not read past their end")
    func damagedBytes() throws {
        let packed = PackedFields.pack(Self.fields)
        for length in [0, 1, 2, packed.count / 2, packed.count - 1] {
            let cut = packed.prefix(length)
            #expect(throws: PackedFieldsError.self) { try PackedFields.unpack(cut) }
            #expect(throws: PackedFieldsError.self) {
                try cut.withUnsafeBytes { try PackedFields.forEach($0) { _, _ in } }
            }
        }
        var otherVersion = packed
        otherVersion[otherVersion.startIndex] = 9
        #expect(throws: PackedFieldsError.self) { try PackedFields.unpack(otherVersion) }
    }
}
