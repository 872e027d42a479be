import ShareKit

/// Query filters and sort keys, evaluated on decoded records.
enum QueryEvaluation {
    static func value(_ record: Record, _ fieldName: String) -> FieldValue? {
        switch fieldName {
        case "___recordID", "recordName": return .string(record.recordName)
        case "___createTime": return record.created.map { .timestamp($0.timestamp) }
        case "___modTime": return record.modified.map { .timestamp($0.timestamp) }
        default: return record.fields[fieldName]
        }
    }

    static func matches(_ record: Record, _ filter: QueryFilter) -> Bool {
        let field = value(record, filter.fieldName)
        switch filter.comparator {
        case .equals: return field.map { equal($0, filter.value) } ?? false
        case .notEquals: return !(field.map { equal($0, filter.value) } ?? false)
        case .lessThan: return compare(field, filter.value).map { $0 < 0 } ?? false
        case .lessThanOrEquals: return compare(field, filter.value).map { $0 <= 0 } ?? false
        case .greaterThan: return compare(field, filter.value).map { $0 > 0 } ?? false
        case .greaterThanOrEquals: return compare(field, filter.value).map { $0 >= 0 } ?? false
        case .in, .notIn:
            let candidates: [FieldValue]
            if case .list(_, let values) = filter.value { candidates = values } else { candidates = [filter.value] }
            let found = field.map { f in candidates.contains { equal(f, $0) } } ?? false
            return filter.comparator == .in ? found : !found
        case .beginsWith:
            if case .string(let s)? = field, case .string(let prefix) = filter.value { return s.hasPrefix(prefix) }
            return false
        case .listContains:
            if case .list(_, let values)? = field { return values.contains { equal($0, filter.value) } }
            return false
        }
    }

    static func equal(_ a: FieldValue, _ b: FieldValue) -> Bool {
        if let c = compare(a, b) { return c == 0 }
        if case .reference(let x) = a, case .reference(let y) = b { return x.recordName == y.recordName }
        return a == b
    }

    /// -1, 0 or 1 for comparable values (strings, numbers, timestamps); nil otherwise.
    static func compare(_ a: FieldValue?, _ b: FieldValue) -> Int? {
        guard let a else { return nil }
        switch (a, b) {
        case (.string(let x), .string(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        default:
            guard let x = number(a), let y = number(b) else { return nil }
            return x < y ? -1 : (x == y ? 0 : 1)
        }
    }

    private static func number(_ v: FieldValue) -> Double? {
        switch v {
        case .int64(let i): Double(i)
        case .double(let d): d
        case .timestamp(let t): Double(t)
        default: nil
        }
    }

    /// Sort order by the keys; records missing a key sort last, ties by record name.
    static func ordered(_ a: Record, _ b: Record, by keys: [QuerySort]) -> Bool {
        for key in keys {
            let x = value(a, key.fieldName)
            let y = value(b, key.fieldName)
            switch (x, y) {
            case (nil, nil): continue
            case (nil, _): return false
            case (_, nil): return true
            case (let x?, let y?):
                guard let c = compare(x, y), c != 0 else { continue }
                return key.ascending ? c < 0 : c > 0
            }
        }
        return a.recordName < b.recordName
    }
}
