import CloudKitWire
import Foundation
import ShareKit
import Testing

/// Responses shaped as Apple documents them decode into the ShareKit model.
@Suite struct ResponseDecodingTests {
    let zone = ZoneID(zoneName: "FamilyLists")

    func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(json.utf8))
    }

    @Test func fieldsWithoutTypeAreInferred() throws {
        let record = try decode(
            WireRecord.self,
            #"{"recordName":"r","recordType":"Person","fields":{"firstName":{"value":"Mei"},"age":{"value":31},"#
                + #""height":{"value":1.62},"member":{"value":true},"tags":{"value":["a","b"]},"#
                + #""friend":{"value":{"recordName":"x","action":"NONE"}},"home":{"value":{"latitude":1.5,"longitude":2}}}}"#
        ).record(in: zone)
        #expect(record.fields["firstName"] == .string("Mei"))
        #expect(record.fields["age"] == .int64(31))
        #expect(record.fields["height"] == .double(1.62))
        #expect(record.fields["member"] == .int64(1))
        #expect(record.fields["tags"] == .list(elementType: .string, [.string("a"), .string("b")]))
        #expect(record.fields["friend"] == .reference(Reference(recordName: "x")))
        #expect(record.fields["home"] == .location(Location(latitude: 1.5, longitude: 2)))
    }

    @Test("typed values written in another JSON form are read as their type")
    func typedFieldsInOtherForms() throws {
        let record = try decode(
            WireRecord.self,
            #"{"recordName":"r","recordType":"T","fields":{"flag":{"value":true,"type":"INT64"},"#
                + #""count":{"value":"12","type":"INT64"},"ratio":{"value":"1.5","type":"DOUBLE"},"#
                + #""when":{"value":1714554000000.4,"type":"TIMESTAMP"},"name":{"value":"Mei","type":"STRING"}}}"#
        ).record(in: zone)
        #expect(record.fields["flag"] == .int64(1))
        #expect(record.fields["count"] == .int64(12))
        #expect(record.fields["ratio"] == .double(1.5))
        #expect(record.fields["when"] == .timestamp(1_714_554_000_000))
        #expect(record.fields["name"] == .string("Mei"))
        #expect(throws: DecodingError.self) {
            try decode(WireRecord.self, #"{"recordName":"r","fields":{"n":{"value":"x","type":"INT64"}}}"#)
        }
    }

    @Test func typedFieldsFollowTheirType() throws {
        let record = try decode(
            WireRecord.self,
            #"{"recordName":"r","recordType":"T","fields":{"when":{"value":1714554000000,"type":"TIMESTAMP"},"#
                + #""n":{"value":3,"type":"DOUBLE"},"b":{"value":"AAH+","type":"BYTES"},"e":{"value":[],"type":"INT64_LIST"}}}"#
        ).record(in: zone)
        #expect(record.fields["when"] == .timestamp(1_714_554_000_000))
        #expect(record.fields["n"] == .double(3))
        #expect(record.fields["b"] == .bytes(Data([0, 1, 254])))
        #expect(record.fields["e"] == .list(elementType: .int64, []))
    }

    @Test func anUnknownTypeIsAnError() {
        #expect(throws: DecodingError.self) {
            try decode(WireRecord.self, #"{"recordName":"r","fields":{"x":{"value":1,"type":"BOOLEAN"}}}"#)
        }
    }

    @Test func cloudKitJSSpellingsAreAccepted() throws {
        let share = try decode(
            WireRecord.self,
            #"{"recordName":"s","recordType":"cloudkit.share","publicPermission":"NONE","#
                + #""participants":[{"userIdentity":{"userRecordName":"_bob","lookupInfo":{"emailAddress":"bob@example.com"},"#
                + #""nameComponents":{"givenName":"Bob","familyName":"Builder"}},"type":"PRIVATE_USER","permission":"READ_WRITE","#
                + #""acceptanceStatus":"PENDING"}],"owner":{"userIdentity":{"userRecordName":"_alice"},"type":"OWNER","#
                + #""permission":"READ_WRITE","acceptanceStatus":"ACCEPTED"},"shortGUID":"0Ab3"}"#
        ).shareValue(in: zone)
        let bob = try #require(share.participants.first)
        #expect(bob.role == .privateUser)
        #expect(bob.acceptance == .pending)
        #expect(bob.email == "bob@example.com")
        #expect(bob.name == "Bob Builder")
        #expect(share.ownerRecordName == "_alice")
        #expect(share.url == "https://www.icloud.com/share/0Ab3")
        // Written back in the Web Services spelling.
        let text = String(decoding: try WireCoding.encoder().encode(WireParticipant(bob)), as: UTF8.self)
        #expect(text.contains(#""type":"USER""#))
        #expect(text.contains(#""acceptanceStatus":"INVITED""#))
    }

    @Test func perRecordErrorsKeepCodeAndReason() throws {
        let response = try decode(
            RecordsResponse.self,
            #"{"records":[{"recordName":"milk","serverErrorCode":"CONFLICT","reason":"stale tag","uuid":"u1"},"#
                + #"{"recordName":"eggs","deleted":true},{"recordName":"x","serverErrorCode":"NEW_CODE","reason":"huh"}]}"#
        )
        let outcomes = response.records.map { $0.outcome(in: zone) }
        #expect(
            outcomes[0] == .failed(recordName: "milk", ShareError(.conflict, "stale tag", subject: "FamilyLists/milk")))
        #expect(outcomes[1] == .deleted(recordName: "eggs"))
        #expect(outcomes[2].error?.code == .internalError)
        #expect(outcomes[2].error?.reason.contains("NEW_CODE") == true)
    }

    @Test func aProductionSchemaWithoutSharesIsExplained() throws {
        let error = try decode(
            WireError.self,
            #"{"uuid":"u","serverErrorCode":"BAD_REQUEST","reason":"Cannot create new type cloudkit.share in production schema"}"#
        ).shareError(subject: nil)
        #expect(error.code == .badRequest)
        #expect(error.reason.hasPrefix("Cannot create new type cloudkit.share in production schema"))
        #expect(error.reason.contains("deploy the development schema to production"))
    }

    @Test func shareURLsGiveTheirShortGUID() {
        #expect(ShareURL.shortGUID(from: "https://www.icloud.com/share/0Ab3#Family_Lists") == "0Ab3")
        #expect(ShareURL.shortGUID(from: "0Ab3") == "0Ab3")
        #expect(ShareURL.shortGUID(from: "sharelane://127.0.0.1/share/XYZ?x=1") == "XYZ")
    }
}
