import ShareKit

/// Compares a live field value with the value an `expect` step wrote, as a person reading the recipe means it.
///
/// YAML gives `2` an `INT64` type and `2.0` a `DOUBLE` one; a number matches a number of either type with the
/// same value. A reference matches by record name, because a participant sees the owner's zone under another
/// owner name. An asset matches an asset with the same content.
enum FieldValueMatch {
    static func matches(_ live: FieldValue, _ expected: FieldValue) -> Bool {
        switch (live, expected) {
        case (.int64(let a), .double(let b)), (.double(let b), .int64(let a)):
            return Double(a) == b
        case (.reference(let a), .reference(let b)):
            return a.recordName == b.recordName
        case (.list(_, let a), .list(_, let b)):
            return a.count == b.count && zip(a, b).allSatisfy { matches($0, $1) }
        default:
            // Assets match by content (`AssetValue.sameContent`), wherever their bytes are.
            return live.isSameValue(as: expected)
        }
    }
}
