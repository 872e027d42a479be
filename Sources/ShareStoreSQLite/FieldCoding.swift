import Foundation
import ShareKit

/// What the store checks in a record's fields (which it keeps packed, `PackedFields`).
enum FieldCoding {
    /// The references with `DELETE_SELF` among `fields` that point into the record's own zone.
    static func deleteSelfTargets(_ fields: [String: FieldValue], zoneName: String) -> [String] {
        fields.values.flatMap { $0.referencedRecordNames(action: .deleteSelf, inZone: zoneName) }
    }

    /// The references with `VALIDATE` among `fields` that point into the record's own zone.
    static func validatedTargets(_ fields: [String: FieldValue], zoneName: String) -> [String] {
        fields.values.flatMap { $0.referencedRecordNames(action: .validate, inZone: zoneName) }
    }
}
