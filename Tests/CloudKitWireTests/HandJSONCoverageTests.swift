import Foundation
import ShareKit
import Testing

@testable import CloudKitWire

/// The hand-written JSON code (`CloudKitWire/HandJSON`) is a fast path beside `JSONEncoder` and `JSONDecoder`:
/// it writes every member of a record, and it reads whatever it meets as `JSONDecoder` reads it, or leaves
/// it to `JSONDecoder`.
@Suite("Hand-written JSON against Foundation's")
struct HandJSONCoverageTests {
    /// A record with every member of `WireRecord` set.
    static var everyMember: WireRecord {
        let zone = ZoneID(zoneName: "Lists", ownerRecordName: "_owner")
        let bob = WireParticipant(
            Participant(
                participantID: "p-bob", userRecordName: "_bob", email: "bob@example.com", name: "Bob",
                role: .administrator, permission: .readWrite, acceptance: .accepted))
        var record = WireRecord(recordName: "every", recordType: "Item")
        record.recordChangeTag = "t1"
        record.fields = ["title": WireField(.string("Milk")), "qty": WireField(.int64(2))]
        record.parent = WireRecordPointer(recordName: "list", recordChangeTag: "p1")
        record.share = WireShareReference(recordName: "s", zoneID: zone)
        record.zoneID = WireZoneID(zone)
        record.created = WireStamp(Stamp(timestamp: 1, userRecordName: "_owner"))
        record.modified = WireStamp(Stamp(timestamp: 2, userRecordName: "_bob"))
        record.deleted = false
        record.pluginFields = WirePluginFields()
        record.createShortGUID = true
        record.forRecord = WireRecordPointer(recordName: "list", recordChangeTag: "p1")
        record.publicPermission = "NONE"
        record.participants = [bob]
        record.owner = WireParticipant(owner: "_owner")
        record.currentUserParticipant = bob
        record.shortGUID = "0abc"
        record.url = "https://www.icloud.com/share/0abc"
        record.serverErrorCode = "CONFLICT"
        record.reason = "changed"
        record.retryAfter = 2
        return record
    }

    @Test("the fixture sets every member of WireRecord, so a member added later must be added here too")
    func fixtureIsComplete() {
        let unset = Mirror(reflecting: Self.everyMember).children.filter { child in
            if case Optional<Any>.none = child.value as Any? { return true }
            return "\(child.value)" == "nil"
        }.compactMap(\.label)
        #expect(unset.isEmpty, "members the fixture leaves unset: \(unset)")
    }

    @Test("the record writers write every member of a record: a response and a request read back whole")
    func writersCoverEveryMember() throws {
        let record = Self.everyMember
        let response = RecordsResponse(records: [record], continuationMarker: nil)
        let written = try WireRecordWriter.encode(response)
        #expect(try JSONDecoder().decode(RecordsResponse.self, from: written) == response)
        // Each member's key is in what was written.
        let object = try #require(
            (try JSONSerialization.jsonObject(with: written) as? [String: Any])?["records"] as? [[String: Any]])
        let keys = Set(object.first?.keys.map { $0 } ?? [])
        for label in Mirror(reflecting: record).children.compactMap(\.label) {
            #expect(keys.contains(label), "the writer left out \(label)")
        }
        let request = ModifyRecordsRequest(
            operations: [ModifyRecordsRequest.Operation(operationType: "update", record: record)],
            zoneID: record.zoneID, atomic: true)
        let sent = try WireRecordWriter.encode(request)
        #expect(try JSONDecoder().decode(ModifyRecordsRequest.self, from: sent) == request)
    }

    // MARK: - Randomized

    /// The same seed, the same bodies.
    typealias Seeded = SplitMix64

    /// `data` with one byte changed to a mark of JSON's, dropped or doubled.
    static func damaged(_ data: Data, _ random: inout Seeded) -> Data {
        var damaged = [UInt8](data)
        let at = Int.random(in: 0..<damaged.count, using: &random)
        switch Int.random(in: 0...2, using: &random) {
        case 0:
            let marks = Array("{}[]\",:0-.e\\ ntf".utf8)
            damaged[at] = marks[Int.random(in: 0..<marks.count, using: &random)]
        case 1: damaged.remove(at: at)
        default: damaged.insert(damaged[at], at: at)
        }
        return Data(damaged)
    }

    static let alphabet = Array("abcXYZ019 _-/.\"\\\t\n\u{0}\u{1F}\u{7F}é🐑")

    static func text(_ random: inout Seeded) -> String {
        String(
            (0..<Int.random(in: 0...12, using: &random)).map { _ in
                alphabet[Int.random(in: 0..<alphabet.count, using: &random)]
            })
    }

    static func value(_ random: inout Seeded) -> FieldValue {
        switch Int.random(in: 0...6, using: &random) {
        case 0: .string(text(&random))
        case 1: .int64(Int64.random(in: .min ... .max, using: &random))
        case 2:
            .double(
                [0, -0.0, 1.5, 1e-300, 3e300, Double(Int.random(in: -9...9, using: &random)) / 7][
                    Int.random(in: 0...5, using: &random)])
        case 3: .timestamp(Int64.random(in: -1_000_000_000_000...4_000_000_000_000, using: &random))
        case 4:
            .list(elementType: .string, (0..<Int.random(in: 0...3, using: &random)).map { _ in .string(text(&random)) })
        case 5: .reference(Reference(recordName: "r" + text(&random), action: .deleteSelf))
        default:
            .bytes(
                Data((0..<Int.random(in: 0...8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
            )
        }
    }

    static func record(_ random: inout Seeded, _ index: Int) -> WireRecord {
        var record = WireRecord(recordName: "n\(index)" + text(&random), recordType: "Item")
        var fields: [String: WireField] = [:]
        for field in 0..<Int.random(in: 0...5, using: &random) {
            var wire = WireField(value(&random))
            wire.numbersAsStrings = Bool.random(using: &random)
            fields["f\(field)"] = wire
        }
        record.fields = Bool.random(using: &random) ? fields : nil
        if Bool.random(using: &random) { record.recordChangeTag = text(&random) }
        if Bool.random(using: &random) { record.parent = WireRecordPointer(recordName: "p" + text(&random)) }
        if Bool.random(using: &random) {
            record.created = WireStamp(
                Stamp(timestamp: Int64.random(in: 0...1 << 42, using: &random), userRecordName: "_u"))
        }
        if Int.random(in: 0...9, using: &random) == 0 {
            record = WireRecord(recordName: record.recordName, error: ShareError(.notFound, text(&random)))
        }
        return record
    }

    /// The reader is `JSONText`'s `JSONCursor`, the saved plan's too: a damaged body it takes that
    /// `JSONDecoder` refuses, or the other way round, fails here.
    @Test("random records, written by either writer and then damaged at random, read as JSONDecoder reads them")
    func randomBodies() throws {
        var random = Seeded(seed: 20_261_125)
        for round in 0..<300 {
            let records = (0..<Int.random(in: 0...6, using: &random)).map { Self.record(&random, $0) }
            let response = RecordsResponse(
                records: records, continuationMarker: Bool.random(using: &random) ? "m" : nil)
            let written = [try WireRecordWriter.encode(response), try WireCoding.bodyEncoder().encode(response)]
            for data in written {
                WireRecordReaderTests.expectSameAsJSONDecoder(RecordsResponse.self, data)
                // One byte changed, dropped or doubled: whatever JSONDecoder makes of it, so does the reader.
                guard !data.isEmpty else { continue }
                WireRecordReaderTests.expectSameAsJSONDecoder(
                    RecordsResponse.self, Self.damaged(data, &random))
            }
            let request = ModifyRecordsRequest(
                operations: records.filter { $0.serverErrorCode == nil }.map {
                    ModifyRecordsRequest.Operation(operationType: "create", record: $0)
                }, zoneID: WireZoneID(ZoneID(zoneName: "Z\(round)")), atomic: Bool.random(using: &random))
            WireRecordReaderTests.expectSameAsJSONDecoder(
                ModifyRecordsRequest.self, try WireRecordWriter.encode(request))
        }
    }
}
