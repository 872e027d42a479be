import Foundation
import ShareKit

/// The store keeps a record's fields in `PackedFields`' form.
enum FieldCoding {
    static func encode(_ fields: [String: FieldValue]) -> Data { PackedFields.pack(fields) }

    static func decode(_ data: Data) throws -> [String: FieldValue] { try PackedFields.unpack(data) }

    /// The fields of these bytes, read in place (SQLite's own bytes).
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> [String: FieldValue] {
        try PackedFields.unpack(bytes)
    }

    /// The references with `DELETE_SELF` among `fields` that point into the record's own zone.
    static func deleteSelfTargets(_ fields: [String: FieldValue], zoneName: String) -> [String] {
        fields.values.flatMap { $0.referencedRecordNames(action: .deleteSelf, inZone: zoneName) }
    }

    /// The references with `VALIDATE` among `fields` that point into the record's own zone.
    static func validatedTargets(_ fields: [String: FieldValue], zoneName: String) -> [String] {
        fields.values.flatMap { $0.referencedRecordNames(action: .validate, inZone: zoneName) }
    }
}
