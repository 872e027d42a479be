import Foundation

/// Query filters and sort keys, evaluated on records: the one reading of CloudKit's comparators and sort
/// rules, for every store and for queries that span zones.
public enum QueryEvaluation {
    /// A field's value, or a system field's (`___recordID`, `___createTime`, `___modTime`, and as references
    /// `___createdBy`, `___modifiedBy`, `___parent`, `___share`).
    public static func value(_ record: Record, _ fieldName: String) -> FieldValue? {
        switch fieldName {
        case "___recordID", "recordName": return .string(record.recordName)
        case "___createTime": return record.created.map { .timestamp($0.timestamp) }
        case "___modTime": return record.modified.map { .timestamp($0.timestamp) }
        case "___createdBy": return record.created.map { .reference(Reference(recordName: $0.userRecordName)) }
        case "___modifiedBy": return record.modified.map { .reference(Reference(recordName: $0.userRecordName)) }
        case "___parent": return record.parent.map { .reference(Reference(recordName: $0)) }
        case "___share": return record.shareRecordName.map { .reference(Reference(recordName: $0)) }
        default: return record.fields[fieldName]
        }
    }

    /// Whether `record` passes `filter`; a negated comparator (`NOT_…`) passes a record without the field.
    public static func matches(_ record: Record, _ filter: QueryFilter) -> Bool {
        let field = value(record, filter.fieldName)
        let candidates: [FieldValue]
        if case .list(_, let values) = filter.value { candidates = values } else { candidates = [filter.value] }
        let members: [FieldValue]
        if case .list(_, let values)? = field { members = values } else { members = [] }
        switch filter.comparator {
        case .equals: return field.map { equal($0, filter.value) } ?? false
        case .notEquals: return !(field.map { equal($0, filter.value) } ?? false)
        case .lessThan: return compare(field, filter.value).map { $0 < 0 } ?? false
        case .lessThanOrEquals: return compare(field, filter.value).map { $0 <= 0 } ?? false
        case .greaterThan: return compare(field, filter.value).map { $0 > 0 } ?? false
        case .greaterThanOrEquals: return compare(field, filter.value).map { $0 >= 0 } ?? false
        case .near:
            guard case .location(let here)? = field, case .location(let there) = filter.value,
                let distance = filter.distance
            else { return false }
            return metres(here, there) <= distance
        case .containsAllTokens, .containsAnyTokens:
            let wanted = tokens(of: filter.value)
            guard let field, !wanted.isEmpty else { return false }
            let present = tokens(of: field)
            return filter.comparator == .containsAllTokens
                ? wanted.isSubset(of: present) : !wanted.isDisjoint(with: present)
        case .in: return field.map { f in candidates.contains { equal(f, $0) } } ?? false
        case .notIn: return !(field.map { f in candidates.contains { equal(f, $0) } } ?? false)
        case .listContains: return members.contains { equal($0, filter.value) }
        case .notListContains: return !members.contains { equal($0, filter.value) }
        case .listContainsAny: return candidates.contains { c in members.contains { equal($0, c) } }
        case .notListContainsAny: return !candidates.contains { c in members.contains { equal($0, c) } }
        case .listContainsAll: return candidates.allSatisfy { c in members.contains { equal($0, c) } }
        case .notListContainsAll: return !candidates.allSatisfy { c in members.contains { equal($0, c) } }
        case .beginsWith: return begins(field, with: filter.value)
        case .notBeginsWith: return !begins(field, with: filter.value)
        case .listMemberBeginsWith: return members.contains { begins($0, with: filter.value) }
        case .notListMemberBeginsWith: return !members.contains { begins($0, with: filter.value) }
        }
    }

    private static func begins(_ field: FieldValue?, with prefix: FieldValue) -> Bool {
        guard case .string(let text)? = field, case .string(let start) = prefix else { return false }
        return text.hasPrefix(start)
    }

    /// The words of a text (or of every text of a list), lower-cased: CloudKit's token search matches whole
    /// words without regard to case.
    public static func tokens(of value: FieldValue) -> Set<String> {
        switch value {
        case .string(let text):
            return Set(
                text.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init))
        case .list(_, let values):
            return values.reduce(into: []) { $0.formUnion(tokens(of: $1)) }
        default:
            return []
        }
    }

    /// The great-circle distance between two locations in metres (haversine, on a sphere of the Earth's mean
    /// radius).
    public static func metres(_ a: Location, _ b: Location) -> Double {
        let radius = 6_371_008.8
        func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
        let dLat = radians(b.latitude - a.latitude)
        let dLon = radians(b.longitude - a.longitude)
        let h =
            sin(dLat / 2) * sin(dLat / 2)
            + cos(radians(a.latitude)) * cos(radians(b.latitude)) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * radius * asin(min(1, h.squareRoot()))
    }

    /// Equality as queries see it: numbers by value, references by record name. A record's name (a string)
    /// equals a reference to it: the reference's filter on `recordName` takes a REFERENCE value
    /// (`{"recordName": …}`), as `___recordID` is one.
    public static func equal(_ a: FieldValue, _ b: FieldValue) -> Bool {
        if let c = compare(a, b) { return c == 0 }
        switch (a, b) {
        case (.reference(let x), .reference(let y)): return x.recordName == y.recordName
        case (.string(let name), .reference(let y)), (.reference(let y), .string(let name)): return name == y.recordName
        default: return a == b
        }
    }

    /// -1, 0 or 1 for comparable values (strings, numbers, timestamps); nil otherwise.
    public static func compare(_ a: FieldValue?, _ b: FieldValue) -> Int? {
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
    public static func ordered(_ a: Record, _ b: Record, by keys: [QuerySort]) -> Bool {
        for key in keys {
            var x = value(a, key.fieldName)
            var y = value(b, key.fieldName)
            if let origin = key.relativeLocation {
                // By distance from `origin`: a record without a location sorts last, as any missing key does.
                x = x.flatMap { if case .location(let l) = $0 { .double(metres(l, origin)) } else { nil } }
                y = y.flatMap { if case .location(let l) = $0 { .double(metres(l, origin)) } else { nil } }
            }
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
