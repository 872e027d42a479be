import CloudKitWire
import Foundation
import ShareKit
import Testing

/// The shapes of `serve`'s answers where published captures of Apple's live service show them (shared/CLOUDKIT.md,
/// "What the live service answers"): a non-atomic batch answering a bad operation in its place, the keys every
/// record carries, and the `records/resolve` result. Requests are sent as a client sends them; answers are
/// checked key by key.
@Suite(.serialized)
struct LiveAnswerShapeTests {
    typealias H = EmulatorHarness
    typealias Client = LiveAnswerTests.Client

    /// An asset value whose receipt this server never handed out.
    static let unknownUpload =
        #"{"fileChecksum":"fnv1a64:0123456789abcdef","receipt":"serve-fnv1a64:0123456789abcdef","size":3}"#
    /// An asset value whose receipt does not match its checksum.
    static let mismatchedReceipt =
        #"{"fileChecksum":"fnv1a64:0123456789abcdef","receipt":"serve-fnv1a64:fedcba9876543210","size":3}"#

    static func create(_ name: String, asset: String? = nil) -> String {
        let photo = asset.map { #","photo":{"value":\#($0),"type":"ASSETID"}"# } ?? ""
        return #"{"operationType":"create","record":{"recordName":"\#(name)","recordType":"Card","#
            + #""fields":{"title":{"value":"\#(name)"}\#(photo)}}}"#
    }

    static func entries(_ answer: H.Answer) -> [[String: Any]] { answer.json["records"] as? [[String: Any]] ?? [] }

    // MARK: A bad operation in a non-atomic batch

    @Test(
        "a create whose asset receipt does not validate is refused in its place, BAD_REQUEST 'bad upload receipt (did_not_validate)', and the other creates are saved"
    )
    func aBadReceiptIsRefusedInItsPlace() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            let body = LiveAnswerTests.modify(
                Self.create("before"), Self.create("forged", asset: Self.unknownUpload),
                Self.create("tampered", asset: Self.mismatchedReceipt), Self.create("after"))
            let answer = try await alice.post("public", "records/modify", body)
            #expect(answer.status == 200, "\(answer.text)")
            let entries = Self.entries(answer)
            try #require(entries.count == 4, "\(answer.text)")
            #expect(entries.map { $0["recordName"] as? String } == ["before", "forged", "tampered", "after"])
            for refused in entries[1...2] {
                #expect(Set(refused.keys) == ["recordName", "serverErrorCode", "reason"], "\(answer.text)")
                #expect(refused["serverErrorCode"] as? String == "BAD_REQUEST", "\(answer.text)")
                #expect(refused["reason"] as? String == "bad upload receipt (did_not_validate)", "\(answer.text)")
            }
            for saved in [entries[0], entries[3]] {
                #expect(saved["serverErrorCode"] == nil, "\(answer.text)")
                #expect(saved["recordChangeTag"] is String, "\(answer.text)")
            }
            #expect(try await alice.exists("before"))
            #expect(try await alice.exists("after"))
            #expect(try await !alice.exists("forged"))
            #expect(try await !alice.exists("tampered"))
        }
    }

    @Test("in a custom zone a non-atomic batch is answered in place too; an atomic one is refused whole, nothing saved")
    func aBadReceiptInACustomZone() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            let zone = try await alice.post(
                "private", "zones/modify",
                #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"Lists"}}}]}"#)
            #expect(zone.status == 200, "\(zone.text)")

            let loose = try await alice.post(
                "private", "records/modify",
                LiveAnswerTests.modify(
                    Self.create("milk"), Self.create("forged", asset: Self.unknownUpload), zone: "Lists",
                    atomic: false))
            #expect(loose.status == 200, "\(loose.text)")
            let entries = Self.entries(loose)
            #expect(entries.first?["recordChangeTag"] is String, "\(loose.text)")
            #expect(entries.last?["serverErrorCode"] as? String == "BAD_REQUEST", "\(loose.text)")
            #expect(entries.last?["reason"] as? String == "bad upload receipt (did_not_validate)", "\(loose.text)")

            let whole = try await alice.post(
                "private", "records/modify",
                LiveAnswerTests.modify(
                    Self.create("bread"), Self.create("forged", asset: Self.unknownUpload), zone: "Lists",
                    atomic: true))
            #expect(whole.status == 400, "\(whole.text)")
            #expect(whole.json["serverErrorCode"] as? String == "BAD_REQUEST", "\(whole.text)")
            let reason = whole.json["reason"] as? String ?? ""
            #expect(reason.hasPrefix("bad upload receipt (did_not_validate)"), "\(whole.text)")
            #expect(reason.contains("upload it through assets/upload"), "says what to do: \(whole.text)")
            let read = try await alice.post(
                "private", "records/lookup", #"{"zoneID":{"zoneName":"Lists"},"records":[{"recordName":"bread"}]}"#)
            #expect(alice.firstRecord(read)["serverErrorCode"] as? String == "NOT_FOUND", "\(read.text)")
        }
    }

    @Test("a records/modify that cannot be read at all is still a 400 for the whole request")
    func anUnreadableRequestIsAWhole400() async throws {
        try await H.withEmulator { base in
            let alice = try await Client(base, "alice@example.com")
            let answer = try await alice.post("public", "records/modify", #"{"operations":[{"operationType":"#)
            #expect(answer.status == 400, "\(answer.text)")
            #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST", "\(answer.text)")
            #expect(answer.json["records"] == nil, "\(answer.text)")
        }
    }
}
