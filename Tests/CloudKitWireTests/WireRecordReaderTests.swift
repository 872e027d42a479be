import Foundation
import ShareKit
import Testing

@testable import CloudKitWire

/// The client reads answers of records, and the emulator reads `records/modify` requests, without
/// `JSONDecoder`: what they read is what `JSONDecoder` reads, and what `JSONDecoder` refuses they leave to it.
@Suite("Record body reader")
struct WireRecordReaderTests {
    static var response: RecordsResponse {
        var response = WireRecordWriterTests.response
        response.records.removeAll { $0.recordName == "infinite" }  // JSON has no infinity
        return response
    }

    static var request: ModifyRecordsRequest {
        let zone = ZoneID(zoneName: "Lists")
        var share = Share.zoneWide(zone, title: "Lists")
        share.participants = [Participant(userRecordName: "", email: "bob@example.com", permission: .readWrite)]
        var request = ModifyRecordsRequest(
            [
                RecordOperation(
                    .create,
                    Record(
                        recordName: "milk", recordType: "Item", zoneID: zone,
                        fields: ["title": .string("Milk \"2%\" \\ é 🐑"), "qty": .int64(-3), "price": .double(1.5)],
                        parent: "list")),
                RecordOperation(.update, Record(recordName: "eggs", recordType: "Item", zoneID: zone, changeTag: "7")),
                RecordOperation(.create, share: share),
                RecordOperation(.delete, Record(recordName: "old", recordType: "Item", zoneID: zone, changeTag: "9")),
                RecordOperation(
                    .create,
                    Record(
                        recordName: "tags", recordType: "Item", zoneID: zone,
                        fields: ["tags": .list(elementType: .string, [.string("a")]), "when": .timestamp(12)])),
            ], in: zone, atomic: true)
        request.desiredKeys = ["title", "qty"]
        return request
    }

    /// What `WireCoding.decode` reads equals what `JSONDecoder` reads, and it throws where `JSONDecoder`
    /// throws.
    static func expectSameAsJSONDecoder<Value: Decodable & Equatable>(
        _ type: Value.Type, _ data: Data, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let reference = Result { try JSONDecoder().decode(type, from: data) }
        let read = Result { try WireCoding.decode(type, from: data) }
        switch (reference, read) {
        case (.success(let expected), .success(let value)):
            #expect(value == expected, "\(String(decoding: data, as: UTF8.self))", sourceLocation: sourceLocation)
        case (.failure, .failure): break
        default:
            Issue.record(
                "JSONDecoder: \(reference), reader: \(read) for \(String(decoding: data, as: UTF8.self))",
                sourceLocation: sourceLocation)
        }
    }

    @Test("answers written by either writer read as JSONDecoder reads them, most records by the reader itself")
    func answers() throws {
        let response = Self.response
        for data in [
            try WireRecordWriter.encode(response), try WireCoding.bodyEncoder().encode(response),
            try WireCoding.encoder(pretty: true).encode(response),
        ] {
            let read = try #require(WireRecordReader.recordsResponse(data))
            #expect(read == response)
            Self.expectSameAsJSONDecoder(RecordsResponse.self, data)
        }
    }

    @Test("requests written by either writer read as JSONDecoder reads them")
    func requests() throws {
        let request = Self.request
        let fast = try WireRecordWriter.encode(request)
        let reference = try WireCoding.bodyEncoder().encode(request)
        #expect(try JSONDecoder().decode(ModifyRecordsRequest.self, from: fast) == request)
        for data in [fast, reference, try WireCoding.encoder(pretty: true).encode(request)] {
            #expect(try #require(WireRecordReader.modifyRequest(data)) == request)
            Self.expectSameAsJSONDecoder(ModifyRecordsRequest.self, data)
        }
        // What the clients send reads back as the request.
        #expect(try WireCoding.decode(ModifyRecordsRequest.self, from: try WireCoding.body(request)) == request)
    }

    @Test("answers of records/accept written by either writer read as JSONDecoder reads them")
    func shareResults() throws {
        let zone = ZoneID(zoneName: "Lists", ownerRecordName: "_owner")
        let share = Share(
            recordName: "share-1", zoneID: zone, rootRecordName: "trip", title: "Trip \"2\"",
            publicPermission: .readOnly, ownerRecordName: "_owner",
            participants: [
                Participant(
                    userRecordName: "_bob", email: "bob@example.com", name: "Bob Smith", role: .privateUser,
                    permission: .readWrite, acceptance: .accepted),
                Participant(userRecordName: "_carol", name: "Carol", permission: .readOnly, acceptance: .pending),
                Participant(userRecordName: "", permission: .readOnly, phone: "+15550100"),
                Participant(userRecordName: "_dan", role: .publicUser, permission: .readOnly, acceptance: .accepted),
            ], changeTag: "s1", shortGUID: "0abc", url: "https://www.icloud.com/share/0abc")
        let bob = share.participants[0]
        let response = ShareResultsResponse(results: [
            WireShareMetadata(
                ShareMetadata(share: share, zoneID: zone, rootRecordName: "trip", participant: bob), shortGUID: "0abc"),
            WireShareMetadata(
                ShareMetadata(share: Share.zoneWide(zone), zoneID: zone, rootRecordName: nil, participant: nil),
                shortGUID: "0def"),
            WireShareMetadata(shortGUID: "0nope", error: ShareError(.notFound, "no share")),
        ])
        let fast = try WireRecordWriter.encode(response)
        #expect(try JSONDecoder().decode(ShareResultsResponse.self, from: fast) == response)
        for data in [fast, try WireCoding.bodyEncoder().encode(response)] {
            #expect(try #require(WireRecordReader.shareResults(data)) == response)
            Self.expectSameAsJSONDecoder(ShareResultsResponse.self, data)
        }
        let identity = #""userIdentity":{"userRecordName":"_u"}"#
        for participant in [
            "{\(identity)}", #"{\#(identity),"type":"ADMINISTRATOR","permission":"READ_WRITE"}"#,
            #"{\#(identity),"type":"GUEST"}"#, #"{\#(identity),"acceptanceStatus":"MAYBE"}"#, #"{"type":"USER"}"#,
            #"{"userIdentity":{"nameComponents":{"givenName":"A"},"lookupInfo":{"phoneNumber":"+1"}},"x":1}"#,
            #"{"userIdentity":{"nameComponents":null,"lookupInfo":null},"participantId":null}"#,
        ] {
            let body = #"{"results":[{"shortGUID":"g","share":{"recordName":"s","participants":[\#(participant)]}}]}"#
            Self.expectSameAsJSONDecoder(ShareResultsResponse.self, Data(body.utf8))
        }
    }

    @Test("odd and broken bodies read as JSONDecoder reads them, or are refused as it refuses them")
    func oddBodies() throws {
        let zone = #""zoneID":{"zoneName":"Z"}"#
        func record(_ members: String) -> String { #"{"records":[{"recordName":"r",\#(members)}]}"# }
        let answers = [
            record(#""fields":{"t":{"value":"\u00e9\ud83d\udc11\/\n","type":"STRING"}}"#),
            record(#""fields":{"t":{"type":"STRING","value":"x"}}"#),
            record(#""fields":{"n":{"value":1.0,"type":"INT64"}}"#),
            record(#""fields":{"n":{"value":1e2,"type":"INT64"}}"#),
            record(#""fields":{"n":{"value":-0,"type":"INT64"}}"#),
            record(#""fields":{"n":{"value":"12","type":"INT64"}}"#),
            record(#""fields":{"n":{"value":9223372036854775808,"type":"INT64"}}"#),
            record(#""fields":{"n":{"value":01,"type":"INT64"}}"#),
            record(#""fields":{"d":{"value":3,"type":"DOUBLE"}}"#),
            record(#""fields":{"d":{"value":-1.5e-3,"type":"DOUBLE"}}"#),
            record(#""fields":{"d":{"value":1e400,"type":"DOUBLE"}}"#),
            record(#""fields":{"d":{"value":"nan","type":"DOUBLE"}}"#),
            record(#""fields":{"t":{"value":true,"type":"INT64"}}"#),
            record(#""fields":{"t":{"value":"x"}}"#),
            record(#""fields":{"t":{"value":"x","type":"STRANGE"}}"#),
            record(#""fields":{"t":{"value":"\ud83d","type":"STRING"}}"#),
            record(#""fields":{"t":{"value":"x","type":"STRING"},"t":{"value":"y","type":"STRING"}}"#),
            record(#""recordType":null,"parent":null,"deleted":false,\#(zone)"#),
            record(#""recordType":"T","recordType":"U""#),
            record(#""unknown":[1,{"a":null}],"recordType":"T""#),
            record(#""created":{"timestamp":1.5,"userRecordName":"u"}"#),
            record(#""zoneID":{"ownerRecordName":"o"}"#),
            record(#""share":{"recordName":"s",\#(zone)}"#),
            record(#""serverErrorCode":"CONFLICT","reason":"changed""#),
            #"{"records":[]}"#, #"{"records":[],"continuationMarker":null}"#, #"{}"#, #"[]"#, "",
            #"{"records":[]} x"#, #"{"records":[{"recordName":"r"}]"#, #" { "records" : [ ] } "#,
            #"{"records":[{"recordName":"r\u0000"}],"other":1}"#,
            // Beyond ASCII without escapes: validated, and read as JSONDecoder reads it.
            #"{"records":[{"recordName":"crème brûlée ✓ 🐑","recordType":"Ä"}]}"#,
        ]
        for text in answers { Self.expectSameAsJSONDecoder(RecordsResponse.self, Data(text.utf8)) }
        var invalidUTF8 = Data(#"{"records":[{"recordName":""#.utf8)
        invalidUTF8.append(contentsOf: [0xC3, 0x28])
        invalidUTF8.append(contentsOf: Data(#""}]}"#.utf8))
        Self.expectSameAsJSONDecoder(RecordsResponse.self, invalidUTF8)
        // The reader itself reads text beyond ASCII, and leaves bytes that are not UTF-8 to JSONDecoder.
        let beyondASCII = WireRecordReader.recordsResponse(
            Data(#"{"records":[{"recordName":"crème ✓ 🐑","recordType":"Ä"}]}"#.utf8))
        #expect(beyondASCII?.records.map(\.recordName) == ["crème ✓ 🐑"])
        #expect(beyondASCII?.records.map(\.recordType) == ["Ä"])
        #expect(WireRecordReader.recordsResponse(invalidUTF8) == nil)

        let requests = [
            #"{"operations":[{"operationType":"create","record":{"recordName":"a","recordType":"T"}}],\#(zone)}"#,
            #"{"operations":[{"record":{"recordName":"a"},"operationType":"create"}],"atomic":null}"#,
            #"{"operations":[{"operationType":"create"}]}"#,
            #"{"operations":[{"operationType":"create","record":{"recordName":"a"},"x":1}]}"#,
            #"{"operations":[],"desiredKeys":["a","b\"c"],"numbersAsStrings":true}"#,
            #"{"operations":[],"atomic":"yes"}"#, #"{"zoneID":{"zoneName":"Z"}}"#,
        ]
        for text in requests { Self.expectSameAsJSONDecoder(ModifyRecordsRequest.self, Data(text.utf8)) }

        let lookups = [
            #"{"records":[{"recordName":"a"},{"recordName":"b\u00e9","recordChangeTag":"1"}],\#(zone)}"#,
            #"{"records":[],"desiredKeys":["t"],"numbersAsStrings":false,"zoneID":null}"#,
            #"{"records":[{"recordName":null}]}"#, #"{"records":[{}]}"#, #"{"records":[{"recordName":"a","x":1}]}"#,
            #"{"records":[{"recordName":"a"}],"records":[]}"#, #"{"zoneID":{"zoneName":"Z"}}"#,
        ]
        for text in lookups { Self.expectSameAsJSONDecoder(LookupRecordsRequest.self, Data(text.utf8)) }
        var lookup = LookupRecordsRequest(recordNames: ["a", "b \"c\""], zoneID: ZoneID(zoneName: "Lists"))
        lookup.desiredKeys = ["title"]
        let lookupBody = try WireCoding.bodyEncoder().encode(lookup)
        #expect(WireRecordReader.lookupRequest(lookupBody) == lookup)
    }
}
