import Foundation
import ShareKit
import Testing

/// A query's system fields, as every store evaluates them: the record's name answers a reference to it, and
/// the creator, last modifier, parent and share read as references.
struct SystemFieldQueryTests {
    static let record = Record(
        recordName: "deadpool", recordType: "Movie", zoneID: .defaultZone, fields: [:], parent: "catalogue",
        created: Stamp(timestamp: 10, userRecordName: "_alice"), modified: Stamp(timestamp: 20, userRecordName: "_bob"),
        shareRecordName: "movies-share")

    static func reference(_ name: String) -> FieldValue { .reference(Reference(recordName: name)) }

    @Test("a filter on recordName takes a reference to the record, as the reference's ___recordID is one")
    func recordNameByReference() {
        #expect(QueryEvaluation.matches(Self.record, QueryFilter("recordName", .equals, Self.reference("deadpool"))))
        #expect(!QueryEvaluation.matches(Self.record, QueryFilter("recordName", .equals, Self.reference("star-wars"))))
        #expect(QueryEvaluation.matches(Self.record, QueryFilter("___recordID", .equals, Self.reference("deadpool"))))
        #expect(QueryEvaluation.matches(Self.record, QueryFilter("recordName", .equals, .string("deadpool"))))
        let list = FieldValue.list(elementType: .reference, [Self.reference("x"), Self.reference("deadpool")])
        #expect(QueryEvaluation.matches(Self.record, QueryFilter("recordName", .in, list)))
    }

    @Test("the creator, last modifier, parent and share are references a filter compares by record name")
    func systemReferences() {
        for (field, name, other) in [
            ("___createdBy", "_alice", "_bob"), ("___modifiedBy", "_bob", "_alice"),
            ("___parent", "catalogue", "deadpool"), ("___share", "movies-share", "other-share"),
        ] {
            #expect(QueryEvaluation.matches(Self.record, QueryFilter(field, .equals, Self.reference(name))), "\(field)")
            #expect(
                !QueryEvaluation.matches(Self.record, QueryFilter(field, .equals, Self.reference(other))), "\(field)")
        }
        #expect(QueryEvaluation.matches(Self.record, QueryFilter("___modTime", .greaterThan, .timestamp(15))))
    }
}
