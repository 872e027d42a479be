import Foundation
import ShareKit
import Testing

/// Every comparator of Apple's reference, each with a record it keeps and one it drops.
struct QueryEvaluationTests {
    static let milan = Location(latitude: 45.4642, longitude: 9.19)
    static let como = Location(latitude: 45.8081, longitude: 9.0852)  // about 39 km from Milan
    static let rome = Location(latitude: 41.9028, longitude: 12.4964)

    static func record(_ name: String, _ fields: [String: FieldValue]) -> Record {
        Record(recordName: name, recordType: "Trip", zoneID: .defaultZone, fields: fields)
    }

    static func strings(_ values: String...) -> FieldValue {
        .list(elementType: .string, values.map(FieldValue.string))
    }

    /// comparator → (filter, a record it keeps, a record it drops).
    static let cases: [QueryFilter.Comparator: (QueryFilter, Record, Record)] = [
        .equals: (QueryFilter("n", .equals, .int64(2)), record("a", ["n": .double(2)]), record("b", ["n": .int64(3)])),
        .notEquals: (QueryFilter("n", .notEquals, .int64(2)), record("a", [:]), record("b", ["n": .int64(2)])),
        .lessThan: (
            QueryFilter("n", .lessThan, .int64(2)), record("a", ["n": .int64(1)]), record("b", ["n": .int64(2)])
        ),
        .lessThanOrEquals: (
            QueryFilter("n", .lessThanOrEquals, .int64(2)), record("a", ["n": .int64(2)]), record("b", ["n": .int64(3)])
        ),
        .greaterThan: (
            QueryFilter("t", .greaterThan, .timestamp(10)), record("a", ["t": .timestamp(11)]),
            record("b", ["t": .timestamp(10)])
        ),
        .greaterThanOrEquals: (
            QueryFilter("s", .greaterThanOrEquals, .string("m")), record("a", ["s": .string("m")]),
            record("b", ["s": .string("l")])
        ),
        .near: (
            QueryFilter("where", .near, .location(milan), distance: 50_000), record("a", ["where": .location(como)]),
            record("b", ["where": .location(rome)])
        ),
        .containsAllTokens: (
            QueryFilter("text", .containsAllTokens, .string("Lake COMO")),
            record("a", ["text": .string("A day at the lake, then Como.")]),
            record("b", ["text": .string("Lake Garda")])
        ),
        .containsAnyTokens: (
            QueryFilter("text", .containsAnyTokens, .string("garda como")),
            record("a", ["text": .string("Lake Garda")]), record("b", ["text": .string("Lake Maggiore")])
        ),
        .in: (
            QueryFilter("s", .in, strings("x", "y")), record("a", ["s": .string("y")]), record("b", ["s": .string("z")])
        ),
        .notIn: (
            QueryFilter("s", .notIn, strings("x", "y")), record("a", ["s": .string("z")]),
            record("b", ["s": .string("x")])
        ),
        .listContains: (
            QueryFilter("tags", .listContains, .string("food")), record("a", ["tags": strings("food", "art")]),
            record("b", ["tags": strings("art")])
        ),
        .notListContains: (
            QueryFilter("tags", .notListContains, .string("food")), record("a", ["tags": strings("art")]),
            record("b", ["tags": strings("food")])
        ),
        .listContainsAny: (
            QueryFilter("tags", .listContainsAny, strings("food", "sea")), record("a", ["tags": strings("sea")]),
            record("b", ["tags": strings("art")])
        ),
        .notListContainsAny: (
            QueryFilter("tags", .notListContainsAny, strings("food", "sea")), record("a", ["tags": strings("art")]),
            record("b", ["tags": strings("art", "sea")])
        ),
        .listContainsAll: (
            QueryFilter("tags", .listContainsAll, strings("food", "sea")),
            record("a", ["tags": strings("sea", "art", "food")]), record("b", ["tags": strings("sea")])
        ),
        .notListContainsAll: (
            QueryFilter("tags", .notListContainsAll, strings("food", "sea")), record("a", ["tags": strings("sea")]),
            record("b", ["tags": strings("food", "sea")])
        ),
        .beginsWith: (
            QueryFilter("s", .beginsWith, .string("Lake")), record("a", ["s": .string("Lake Como")]),
            record("b", ["s": .string("lake Como")])
        ),
        .notBeginsWith: (
            QueryFilter("s", .notBeginsWith, .string("Lake")), record("a", ["s": .string("Como")]),
            record("b", ["s": .string("Lake Como")])
        ),
        .listMemberBeginsWith: (
            QueryFilter("tags", .listMemberBeginsWith, .string("fo")), record("a", ["tags": strings("art", "food")]),
            record("b", ["tags": strings("art")])
        ),
        .notListMemberBeginsWith: (
            QueryFilter("tags", .notListMemberBeginsWith, .string("fo")), record("a", ["tags": strings("art")]),
            record("b", ["tags": strings("food")])
        ),
    ]

    @Test("every comparator keeps the record it should and drops the other", arguments: QueryFilter.Comparator.allCases)
    func comparator(_ comparator: QueryFilter.Comparator) throws {
        let entry = try #require(Self.cases[comparator], "no case for \(comparator.rawValue)")
        let (filter, kept, dropped) = entry
        #expect(filter.problem == nil)
        #expect(QueryEvaluation.matches(kept, filter), "\(comparator.rawValue) should keep \(kept.fields)")
        #expect(!QueryEvaluation.matches(dropped, filter), "\(comparator.rawValue) should drop \(dropped.fields)")
    }

    @Test("NEAR needs a location and a distance; token search needs text; each refusal says what to write")
    func malformedFilters() {
        #expect(QueryFilter("where", .near, .location(Self.milan)).problem?.contains("distance in metres") == true)
        #expect(QueryFilter("where", .near, .string("Milan"), distance: 5).problem?.contains("LOCATION") == true)
        #expect(QueryFilter("text", .containsAnyTokens, .int64(1)).problem?.contains("STRING") == true)
    }

    @Test("sorting by distance from a location puts the nearest first and a record without a location last")
    func sortByDistance() {
        let records = [
            Self.record("rome", ["where": .location(Self.rome)]), Self.record("none", [:]),
            Self.record("como", ["where": .location(Self.como)]),
        ]
        let sorted = records.sorted {
            QueryEvaluation.ordered($0, $1, by: [QuerySort("where", relativeLocation: Self.milan)])
        }
        #expect(sorted.map(\.recordName) == ["como", "rome", "none"])
        let far = records.sorted {
            QueryEvaluation.ordered($0, $1, by: [QuerySort("where", ascending: false, relativeLocation: Self.milan)])
        }
        #expect(far.map(\.recordName) == ["rome", "como", "none"])
        #expect(abs(QueryEvaluation.metres(Self.milan, Self.como) - 39_000) < 2_000)
    }
}
