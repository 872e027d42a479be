import ShareKit

/// A lane's `query:` step, and what `sharelane query` asks: records of one type in one zone, as a user,
/// filtered and sorted with CloudKit's comparators, and what the result must be.
public struct QueryStep: Sendable, Hashable, Codable {
    /// nil: the owner's private database for the owner, the shared database for anyone else.
    public var database: DatabaseScope?
    public var zone: String
    public var query: RecordQuery
    public var expect: Expected?

    /// What the step expects of the records found.
    public enum Expected: Sendable, Hashable, Codable {
        /// `records: N`.
        case count(Int)
        /// `names: [...]`, in result order.
        case names([String])
    }

    public init(database: DatabaseScope?, zone: String, query: RecordQuery, expect: Expected?) {
        self.database = database
        self.zone = zone
        self.query = query
        self.expect = expect
    }
}

/// Query filters and sort keys written as text, for `sharelane query --filter 'endDate GREATER_THAN 2024-05-01T00:00:00Z'`.
public enum QueryText {
    /// `FIELD COMPARATOR VALUE`: the value typed as a recipe types a plain scalar (a timestamp, a number, a
    /// string); `IN`, `NOT_IN` and the `LIST_CONTAINS_ANY|ALL` family take a comma-separated list, `NEAR` a
    /// location and a distance in metres (`place NEAR 37.33,-122.03 1000`).
    /// - Throws: `SchemaLanguageProblem` saying what is wrong.
    public static func filter(_ text: String) throws(SchemaLanguageProblem) -> QueryFilter {
        let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).map(String.init)
        guard parts.count == 3 else {
            throw SchemaLanguageProblem(
                "'\(text)' is not FIELD COMPARATOR VALUE, e.g. 'endDate GREATER_THAN_OR_EQUALS 2024-05-01T00:00:00Z'")
        }
        let comparator = try comparator(parts[1])
        var raw = parts[2]
        if raw.count >= 2, raw.hasPrefix("\""), raw.hasSuffix("\"") {
            raw = String(raw.dropFirst().dropLast())
            return QueryFilter(parts[0], comparator, .string(raw))
        }
        if comparator == .near {
            // `LATITUDE,LONGITUDE METRES`
            let words = raw.split(separator: " ", omittingEmptySubsequences: true)
            let degrees = words.first.map { $0.split(separator: ",").compactMap { Double($0) } } ?? []
            guard words.count == 2, degrees.count == 2, let metres = Double(words[1]) else {
                throw SchemaLanguageProblem(
                    "'\(text)': NEAR takes LATITUDE,LONGITUDE and a distance in metres, e.g. 'place NEAR 37.33,-122.03 1000'"
                )
            }
            return QueryFilter(
                parts[0], comparator, .location(Location(latitude: degrees[0], longitude: degrees[1])), distance: metres
            )
        }
        if comparator.takesList {
            let values = raw.split(separator: ",").map { value(String($0).trimmingCharacters(in: .whitespaces)) }
            return QueryFilter(parts[0], comparator, .list(elementType: values.first?.type ?? .string, values))
        }
        return QueryFilter(parts[0], comparator, value(raw))
    }

    /// A comparator by CloudKit's name (any case).
    public static func comparator(_ word: String) throws(SchemaLanguageProblem) -> QueryFilter.Comparator {
        let names = QueryFilter.Comparator.allCases.map(\.rawValue)
        guard let found = QueryFilter.Comparator(rawValue: word.uppercased()) else {
            throw SchemaLanguageProblem(
                "unknown comparator `\(word)`" + Suggestion.hint(for: word.uppercased(), in: names) + "; use one of "
                    + names.joined(separator: ", "))
        }
        return found
    }

    /// `FIELD` or `FIELD:desc` (`FIELD:asc` too).
    public static func sort(_ text: String) throws(SchemaLanguageProblem) -> QuerySort {
        let parts = text.split(separator: ":").map(String.init)
        guard let field = parts.first, parts.count <= 2 else {
            throw SchemaLanguageProblem("'\(text)' is not FIELD or FIELD:desc")
        }
        switch parts.count == 2 ? parts[1].lowercased() : "asc" {
        case "asc": return QuerySort(field, ascending: true)
        case "desc": return QuerySort(field, ascending: false)
        default: throw SchemaLanguageProblem("'\(text)': the order is asc or desc, e.g. \(field):desc")
        }
    }

    static func value(_ text: String) -> FieldValue {
        switch ScalarResolver.resolve(text) {
        case .int(let i): .int64(i)
        case .double(let d): .double(d)
        case .timestamp(let t): .timestamp(t)
        case .bool(let b): .int64(b ? 1 : 0)
        case .string(let s): .string(s)
        case .null, .intOutOfRange: .string(text)
        }
    }
}
