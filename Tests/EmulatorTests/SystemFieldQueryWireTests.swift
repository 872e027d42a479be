import CloudKitWire
import Foundation
import Parity
import ShareKit
import Testing

/// `records/query` names a system field with `systemFieldName` instead of `fieldName`, as the reference's
/// records/query describes (`recordName`, `createdUserRecordName`, `createdTimestamp`, …) and as apps on
/// CloudKit JS send it (a movie catalogue's look-up by record name, a feed of the caller's own records newest
/// first). Each request is the one CloudKit JS 1.x puts on the wire; no Apple code runs here.
@Suite("Queries by systemFieldName on the wire")
struct SystemFieldQueryWireTests {
    typealias H = EmulatorHarness

    static func query(_ base: String, _ query: String, session: String) async throws -> (H.Answer, JSONValue) {
        try await CloudKitJS1WireTests.send(
            base, "public", "records/query", body: #"{"query":\#(query)}"#, session: session)
    }

    static func save(_ base: String, _ names: [String], session: String) async throws {
        for name in names {
            let (saved, _) = try await CloudKitJS1WireTests.send(
                base, "public", "records/modify",
                body: #"{"operations":[{"operationType":"create","record":{"recordName":"\#(name)","#
                    + #""recordType":"Movie","fields":{"title":{"value":"\#(name)"}}}}]}"#, session: session)
            #expect(saved.status == 200 && !saved.text.contains("serverErrorCode"), "\(saved.text)")
        }
    }

    /// Adds indexes to `Movie`'s system fields, as a developer does in the CloudKit Console.
    static func index(_ base: String, _ fields: String, session: String) async throws {
        let (extended, _) = try await CloudKitJS1WireTests.send(
            base, "public", "schema/extend",
            body: #"{"schema":{"recordTypes":[{"name":"Movie","fields":[\#(fields)]}]}}"#, session: session)
        #expect(extended.status == 200, "\(extended.text)")
    }

    static func names(_ json: JSONValue) -> [String] {
        (json["records"]?.elements ?? []).compactMap { $0["recordName"]?.stringValue }
    }

    @Test(
        "by record name (systemFieldName recordName, a reference value): refused unindexed as Apple refuses it, then found"
    )
    func byRecordName() async throws {
        try await H.withEmulator { base in
            let (token, _) = try await H.signIn(base, "alice@example.com")
            try await Self.save(base, ["star-wars", "deadpool"], session: token)
            let filter =
                #"{"recordType":"Movie","filterBy":[{"systemFieldName":"recordName","comparator":"EQUALS","#
                + #""fieldValue":{"value":{"recordName":"deadpool"}}}]}"#

            let (refused, refusal) = try await Self.query(base, filter, session: token)
            #expect(refused.status == 400, "\(refused.text)")
            #expect(refusal["serverErrorCode"] == .string("BAD_REQUEST"))
            #expect(
                refusal["reason"]?.stringValue?.hasPrefix("Field 'recordName' is not marked queryable") == true,
                "\(refused.text)")

            try await Self.index(
                base, #"{"name":"___recordID","type":"REFERENCE","indexes":["QUERYABLE"]}"#, session: token)
            let (found, json) = try await Self.query(base, filter, session: token)
            #expect(found.status == 200, "\(found.text)")
            #expect(Self.names(json) == ["deadpool"])
            // A typed reference, and the record's name as a string, find it too.
            let typed = filter.replacingOccurrences(
                of: #"{"value":{"recordName":"deadpool"}}"#,
                with: #"{"value":{"recordName":"deadpool"},"type":"REFERENCE"}"#)
            #expect(Self.names(try await Self.query(base, typed, session: token).1) == ["deadpool"])
            let text = filter.replacingOccurrences(
                of: #"{"value":{"recordName":"deadpool"}}"#, with: #"{"value":"deadpool"}"#)
            #expect(Self.names(try await Self.query(base, text, session: token).1) == ["deadpool"])
        }
    }

    @Test("the reference's example: createdUserRecordName EQUALS a user, sorted by createdTimestamp newest first")
    func createdByNewestFirst() async throws {
        try await H.withEmulator { base in
            let (alice, aliceName) = try await H.signIn(base, "alice@example.com")
            let (bob, _) = try await H.signIn(base, "bob@example.com")
            try await Self.save(base, ["alice-1", "alice-2"], session: alice)
            try await Self.save(base, ["bob-1"], session: bob)
            try await Self.index(
                base,
                #"{"name":"___createdBy","type":"REFERENCE","indexes":["QUERYABLE"]},"#
                    + #"{"name":"___createTime","type":"TIMESTAMP","indexes":["QUERYABLE","SORTABLE"]}"#,
                session: alice)

            let (answer, json) = try await Self.query(
                base,
                #"{"recordType":"Movie","filterBy":[{"systemFieldName":"createdUserRecordName","#
                    + #""comparator":"EQUALS","fieldValue":{"value":{"recordName":"\#(aliceName)"},"#
                    + #""type":"REFERENCE"}}],"sortBy":[{"systemFieldName":"createdTimestamp","ascending":false}]}"#,
                session: bob)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(Set(Self.names(json)) == ["alice-1", "alice-2"], "Bob's own record is not Alice's")
            let created: [Int64] = (json["records"]?.elements ?? []).compactMap {
                if case .int(let stamp)? = $0["created"]?["timestamp"] { stamp } else { nil }
            }
            #expect(created.count == 2 && created == created.sorted(by: >), "newest first: \(created)")
        }
    }

    @Test("an unknown systemFieldName is refused with the names a query may use")
    func unknownSystemField() async throws {
        try await H.withEmulator { base in
            let (token, _) = try await H.signIn(base, "alice@example.com")
            try await Self.save(base, ["star-wars"], session: token)
            let (answer, json) = try await Self.query(
                base,
                #"{"recordType":"Movie","filterBy":[{"systemFieldName":"owner","comparator":"EQUALS","#
                    + #""fieldValue":{"value":"x"}}]}"#, session: token)
            #expect(answer.status == 400, "\(answer.text)")
            let reason = json["reason"]?.stringValue ?? ""
            #expect(reason.contains(#"unknown systemFieldName "owner""#), "\(reason)")
            #expect(reason.contains("createdUserRecordName") && reason.contains("modifiedTimestamp"), "\(reason)")
        }
    }
}
