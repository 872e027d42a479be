import Foundation
import ShareKit
import Testing

@testable import CloudKitWire

/// The client reads `changes/zone` answers without `JSONDecoder`, as it reads records: what it reads is what
/// `JSONDecoder` reads, and what `JSONDecoder` refuses it leaves to it.
@Suite("Zone changes reader")
struct ZoneChangesReaderTests {
    static var response: ZoneChangesResponse {
        let zone = ZoneID(zoneName: "Lists", ownerRecordName: "_owner")
        var full = ZoneChangesResponse.ZoneResult()
        full.zoneID = WireZoneID(zone)
        full.records = WireRecordReaderTests.response.records
        full.syncToken = "c3QuMTIz"
        full.moreComing = true
        var bare = ZoneChangesResponse.ZoneResult()
        bare.zoneID = WireZoneID(ZoneID(zoneName: "Empty"))
        bare.records = []
        bare.syncToken = "c3QuMQ=="
        bare.moreComing = false
        return ZoneChangesResponse(zones: [
            full, bare,
            ZoneChangesResponse.ZoneResult(
                zoneID: ZoneID(zoneName: "Gone"), error: ShareError(.zoneNotFound, "zone \"Gone\" does not exist")),
        ])
    }

    @Test("answers written by either writer read as JSONDecoder reads them, by the reader itself")
    func answers() throws {
        let response = Self.response
        for data in [
            try WireRecordWriter.encode(response).data, try WireCoding.bodyEncoder().encode(response),
            try WireCoding.encoder(pretty: true).encode(response),
        ] {
            #expect(try #require(WireRecordReader.zoneChangesResponse(data)) == response)
            WireRecordReaderTests.expectSameAsJSONDecoder(ZoneChangesResponse.self, data)
        }
    }

    @Test("odd, damaged and broken answers read as JSONDecoder reads them, or are refused as it refuses them")
    func oddAnswers() throws {
        for body in [
            #"{"zones":[]}"#, #"{"zones":[{}]}"#, #"{"zones":[{"zoneID":null,"records":null,"moreComing":null}]}"#,
            #"{"zones":[{"zoneID":{"zoneName":"Z"},"syncToken":1}]}"#,
            #"{"zones":[{"zoneID":{"zoneName":"Z"},"x":1}]}"#,
            #"{"zones":[{"zoneID":{"zoneName":"Z"},"moreComing":"yes"}]}"#, #"{"zones":{}}"#, #"{}"#,
            #"{"zones":[{},]}"#,
            #"{"zones":[{"syncToken":"a","syncToken":"b"}]}"#, #"{"zones":[{"records":[{"recordName":"r","x":{}}]}]}"#,
        ] {
            WireRecordReaderTests.expectSameAsJSONDecoder(ZoneChangesResponse.self, Data(body.utf8))
        }
        var random = HandJSONCoverageTests.Seeded(seed: 20_261_126)
        let data = try WireRecordWriter.encode(Self.response).data
        for _ in 0..<300 {
            WireRecordReaderTests.expectSameAsJSONDecoder(
                ZoneChangesResponse.self, HandJSONCoverageTests.damaged(data, &random))
        }
    }
}
