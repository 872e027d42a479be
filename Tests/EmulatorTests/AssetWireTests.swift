import AsyncHTTPClient
import CloudKitWire
import Foundation
import NIOCore
import ShareKit
import SharelaneTestSupport
import Testing

/// Assets over a real `sharelane serve`, as a client written from Apple's reference sends them: raw HTTP
/// for `assets/upload`, the upload to the URL it hands out, the save of the `singleFile` dictionary in
/// `records/modify`, and a read's `downloadURL`.
@Suite(.serialized) struct AssetWireTests {
    typealias H = EmulatorHarness

    static let lists = #"{"zoneName":"Lists"}"#

    /// Alice with a zone `Lists`; her web auth token.
    static func seed(_ base: String) async throws -> String {
        let (token, _) = try await H.signIn(base, "alice@example.com")
        let zone = try await H.raw(
            base, H.databasePath("private", "zones/modify"), query: query(token),
            body: #"{"operations":[{"operationType":"create","zone":{"zoneID":\#(lists)}}]}"#)
        #expect(zone.status == 200, "\(zone.text)")
        return token
    }

    static func query(_ token: String) -> [String: String] {
        ["ckAPIToken": H.apiToken, "ckWebAuthToken": token]
    }

    /// Asks `assets/upload` for one URL for the field `photo` of the record `milk`.
    static func uploadURL(_ base: String, token: String) async throws -> String {
        let answer = try await H.raw(
            base, H.databasePath("private", "assets/upload"), query: query(token),
            body: #"{"zoneID":\#(lists),"tokens":[{"recordName":"milk","recordType":"Todo","fieldName":"photo"}]}"#)
        #expect(answer.status == 200, "\(answer.text)")
        let tokens = try #require(answer.json["tokens"] as? [[String: Any]])
        #expect(tokens.count == 1)
        #expect(tokens.first?["recordName"] as? String == "milk")
        #expect(tokens.first?["fieldName"] as? String == "photo")
        return try #require(tokens.first?["url"] as? String)
    }

    /// Sends bytes (POST) or asks for them (GET) at an absolute URL, with no credentials: the URL is one.
    static func http(_ url: String, method: String, bytes: [UInt8]? = nil) async throws -> (
        status: Int, bytes: [UInt8], json: [String: Any]
    ) {
        var request = HTTPClientRequest(url: url)
        request.method = method == "GET" ? .GET : .POST
        if let bytes { request.body = .bytes(ByteBuffer(bytes: bytes)) }
        let response = try await H.nonFollowingClient.execute(
            request, timeout: .seconds(TestDeadlines.httpRead.components.seconds))
        let body = [UInt8]((try await response.body.collect(upTo: 64 << 20)).readableBytesView)
        let json = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        return (Int(response.status.code), body, json)
    }

    static let picture: [UInt8] = Array("not really a PNG, but bytes all the same \u{0}\u{1}\u{2}".utf8)

    @Test(
        "serve --opaque-checksums: fileChecksum is base64 of a versioned 21-byte digest, not the client's fnv1a64; the save takes it back, reads answer it with a downloadURL that answers the bytes, and a checksum serve did not hand out is refused"
    )
    func opaqueChecksums() async throws {
        try await H.withEmulator(opaqueChecksums: true) { base in
            let token = try await Self.seed(base)
            let uploaded = try await Self.http(
                try await Self.uploadURL(base, token: token), method: "POST", bytes: Self.picture)
            let singleFile = try #require(uploaded.json["singleFile"] as? [String: Any])
            let checksum = try #require(singleFile["fileChecksum"] as? String)
            let digest = try #require(Data(base64Encoded: checksum), "\(checksum)")
            #expect(digest.count == 21 && digest.first == 1, "\(checksum)")
            #expect(!checksum.contains("fnv1a64") && checksum != FNV1a64.checksum(of: Self.picture))

            func save(_ record: String, _ value: [String: Any]) async throws -> (status: Int, text: String) {
                let text = String(
                    decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
                let answer = try await H.raw(
                    base, H.databasePath("private", "records/modify"), query: Self.query(token),
                    body: #"{"zoneID":\#(Self.lists),"operations":[{"operationType":"create","record":{"#
                        + #""recordName":"\#(record)","recordType":"Todo","fields":{"photo":{"value":\#(text),"type":"ASSETID"}}}}]}"#
                )
                return (answer.status, answer.text)
            }
            // A checksum with one byte changed, and its matching receipt: not one serve handed out.
            var forged = [UInt8](digest)
            forged[3] ^= 0xff
            let forgedChecksum = Data(forged).base64EncodedString()
            let refused = try await save(
                "eggs",
                ["fileChecksum": forgedChecksum, "receipt": "serve-" + forgedChecksum, "size": Self.picture.count])
            #expect(refused.status == 400 || refused.text.contains("BAD_REQUEST"), "\(refused.text)")
            #expect(refused.text.contains("no asset"), "\(refused.text)")

            let saved = try await save("milk", singleFile)
            #expect(saved.status == 200 && !saved.text.contains("serverErrorCode"), "\(saved.text)")
            let read = try await H.raw(
                base, H.databasePath("private", "records/lookup"), query: Self.query(token),
                body: #"{"zoneID":\#(Self.lists),"records":[{"recordName":"milk"}]}"#)
            let records = try #require(read.json["records"] as? [[String: Any]])
            let fields = try #require(records.first?["fields"] as? [String: Any])
            let asset = try #require((fields["photo"] as? [String: Any])?["value"] as? [String: Any])
            #expect(asset["fileChecksum"] as? String == checksum)
            let downloadURL = try #require(asset["downloadURL"] as? String)
            #expect(!downloadURL.contains("fnv1a64"), "\(downloadURL)")
            let downloaded = try await Self.http(downloadURL.replacingOccurrences(of: "${f}", with: "a"), method: "GET")
            #expect(downloaded.status == 200 && downloaded.bytes == Self.picture)
        }
    }

    @Test(
        "assets/upload hands out a URL; the bytes POSTed there answer singleFile {fileChecksum, receipt, size}; records/modify saves it; a read answers {downloadURL, fileChecksum, size} and the downloadURL answers the bytes"
    )
    func uploadSaveReadDownload() async throws {
        try await H.withEmulator { base in
            let token = try await Self.seed(base)
            let url = try await Self.uploadURL(base, token: token)
            #expect(url.hasPrefix(base + "/assets/upload?ticket="), "\(url)")
            let uploaded = try await Self.http(url, method: "POST", bytes: Self.picture)
            #expect(uploaded.status == 200, "\(String(decoding: uploaded.bytes, as: UTF8.self))")
            let singleFile = try #require(uploaded.json["singleFile"] as? [String: Any])
            let checksum = try #require(singleFile["fileChecksum"] as? String)
            #expect(checksum == FNV1a64.checksum(of: Self.picture))
            #expect(singleFile["size"] as? Int == Self.picture.count)
            #expect(singleFile["receipt"] as? String != nil)
            let value = String(
                decoding: try JSONSerialization.data(withJSONObject: singleFile, options: [.sortedKeys]), as: UTF8.self)

            let saved = try await H.raw(
                base, H.databasePath("private", "records/modify"), query: Self.query(token),
                body: #"{"zoneID":\#(Self.lists),"operations":[{"operationType":"create","record":{"#
                    + #""recordName":"milk","recordType":"Todo","fields":{"photo":{"value":\#(value),"type":"ASSETID"}}}}]}"#
            )
            #expect(saved.status == 200, "\(saved.text)")
            #expect(!saved.text.contains("serverErrorCode"), "\(saved.text)")

            let read = try await H.raw(
                base, H.databasePath("private", "records/lookup"), query: Self.query(token),
                body: #"{"zoneID":\#(Self.lists),"records":[{"recordName":"milk"}]}"#)
            let records = try #require(read.json["records"] as? [[String: Any]])
            let fields = try #require(records.first?["fields"] as? [String: Any])
            let photo = try #require(fields["photo"] as? [String: Any])
            #expect(photo["type"] as? String == "ASSETID")
            let asset = try #require(photo["value"] as? [String: Any])
            #expect(asset["fileChecksum"] as? String == checksum)
            #expect(asset["size"] as? Int == Self.picture.count)
            #expect(asset["receipt"] == nil, "a read carries no receipt: \(asset)")
            let downloadURL = try #require(asset["downloadURL"] as? String)
            #expect(downloadURL.hasPrefix(base + "/assets/download/"), "\(downloadURL)")
            // Apple's downloadURL has a ${f} placeholder for a file name of the client's choice, then its query.
            #expect(downloadURL.contains("/${f}?"), "\(downloadURL)")
            let named = downloadURL.replacingOccurrences(of: "${f}", with: "photo.png")
            let downloaded = try await Self.http(named, method: "GET")
            #expect(downloaded.status == 200)
            #expect(downloaded.bytes == Self.picture)

            // The client reads the same record as an asset with its download URL and checksum.
            let client = H.store(base)
            let alice = try await client.signIn(email: "alice@example.com", name: nil).recordName
            let looked = try await client.lookupRecords(
                ["milk"], in: ZoneID(zoneName: "Lists"), database: .private, as: alice)
            guard case .saved(let record)? = looked.first, case .assetID(let text)? = record.fields["photo"] else {
                Issue.record("no asset read back: \(looked)")
                return
            }
            let parsed = try #require(AssetValue(text: text))
            #expect(parsed.checksum == checksum)
            #expect(parsed.size == Self.picture.count)
            // A download URL of its own (each read hands out one, whose expiry runs from that read).
            #expect(parsed.location.prefix { $0 != "?" } == downloadURL.prefix { $0 != "?" }, "\(parsed.location)")
        }
    }

    @Test("an upload URL is good once: a second upload to it answers 404 NOT_FOUND and keeps nothing")
    func aReusedUploadURLIsRefused() async throws {
        try await H.withEmulator { base in
            let token = try await Self.seed(base)
            let url = try await Self.uploadURL(base, token: token)
            let first = try await Self.http(url, method: "POST", bytes: [1, 2, 3])
            #expect(first.status == 200)
            let again = try await Self.http(url, method: "POST", bytes: [4, 5, 6])
            #expect(again.status == 404)
            #expect(again.json["serverErrorCode"] as? String == "NOT_FOUND")
            #expect((again.json["reason"] as? String)?.contains("already used") == true, "\(again.json)")
            let missing = try await Self.http(
                base + "/assets/download/" + FNV1a64.checksum(of: [4, 5, 6] as [UInt8]) + "/x", method: "GET")
            #expect(missing.status == 404, "the refused upload kept nothing")
        }
    }

    @Test("an upload URL expires after 15 minutes: an upload then answers 404 NOT_FOUND saying so")
    func anExpiredUploadURLIsRefused() async throws {
        let clock = MovableClock()
        try await H.withEmulator(clock: clock.emulatorClock) { base in
            let token = try await Self.seed(base)
            let url = try await Self.uploadURL(base, token: token)
            clock.advance(by: .seconds(15 * 60 + 1))
            let late = try await Self.http(url, method: "POST", bytes: [1, 2, 3])
            #expect(late.status == 404)
            #expect(late.json["serverErrorCode"] as? String == "NOT_FOUND")
            #expect((late.json["reason"] as? String)?.contains("expired") == true, "\(late.json)")
        }
    }

    @Test("an upload over CloudKit's 50 MB an asset answers 400 BAD_REQUEST naming the limit")
    func aTooLargeUploadIsRefused() async throws {
        try await H.withEmulator { base in
            let token = try await Self.seed(base)
            let url = try await Self.uploadURL(base, token: token)
            let big = [UInt8](repeating: 7, count: CloudKitLimits.assetBytes + 1)
            let answer = try await Self.http(url, method: "POST", bytes: big)
            #expect(answer.status == 400)
            #expect(answer.json["serverErrorCode"] as? String == "BAD_REQUEST")
            #expect((answer.json["reason"] as? String)?.contains("50 MB") == true, "\(answer.json)")
        }
    }

    @Test("a receipt that names no uploaded asset refuses the save with BAD_REQUEST and saves nothing")
    func aForgedReceiptIsRefused() async throws {
        try await H.withEmulator { base in
            let token = try await Self.seed(base)
            let forged =
                #"{"fileChecksum":"fnv1a64:0123456789abcdef","receipt":"serve-fnv1a64:0123456789abcdef","size":3}"#
            let saved = try await H.raw(
                base, H.databasePath("private", "records/modify"), query: Self.query(token),
                body: #"{"zoneID":\#(Self.lists),"operations":[{"operationType":"create","record":{"#
                    + #""recordName":"milk","recordType":"Todo","fields":{"photo":{"value":\#(forged),"type":"ASSETID"}}}}]}"#
            )
            #expect(saved.status == 400, "\(saved.text)")
            #expect(
                (saved.json["reason"] as? String)?.contains("upload it through assets/upload") == true, "\(saved.text)")
            let read = try await H.raw(
                base, H.databasePath("private", "records/lookup"), query: Self.query(token),
                body: #"{"zoneID":\#(Self.lists),"records":[{"recordName":"milk"}]}"#)
            #expect(read.text.contains("NOT_FOUND"), "nothing was saved: \(read.text)")
        }
    }

    @Test(
        "uploaded bytes are kept in the store's file: after a restart a read hands out a downloadURL that answers them (those handed out before the restart are gone)"
    )
    func assetsOutliveARestart() async throws {
        let scratch = try TemporaryDirectory("assets")
        let path = scratch.file("serve.sqlite")
        let before = try await H.withEmulator(storePath: path) { base in
            let token = try await Self.seed(base)
            return try await Self.savedPhoto(base, token: token, bytes: Self.picture)
        }
        try await H.withEmulator(storePath: path) { base in
            // The URL handed out before, at this server's address.
            let handedOut = try #require(
                URLComponents(string: before.replacingOccurrences(of: "${f}", with: "photo.png")))
            let stale = try await Self.http(
                base + handedOut.percentEncodedPath + "?" + (handedOut.percentEncodedQuery ?? ""), method: "GET")
            #expect(stale.status == 404, "a restart draws a new signing key")
            let (token, _) = try await H.signIn(base, "alice@example.com")
            let fresh = try await Self.photoURL(base, token: token)
            let downloaded = try await Self.http(
                fresh.replacingOccurrences(of: "${f}", with: "photo.png"), method: "GET")
            #expect(downloaded.status == 200)
            #expect(downloaded.bytes == Self.picture)
        }
    }

    /// Uploads `bytes` and saves them as the `photo` of a new record `milk` in `Lists` of `container`; answers
    /// the `downloadURL` a lookup then hands out.
    static func savedPhoto(
        _ base: String, token: String, bytes: [UInt8], container: String = H.container
    ) async throws -> String {
        let upload = try await H.raw(
            base, path(container, "assets/upload"), query: query(token),
            body: #"{"zoneID":\#(lists),"tokens":[{"recordName":"milk","recordType":"Todo","fieldName":"photo"}]}"#)
        let url = try #require((upload.json["tokens"] as? [[String: Any]])?.first?["url"] as? String, "\(upload.text)")
        let uploaded = try await http(url, method: "POST", bytes: bytes)
        let singleFile = try #require(uploaded.json["singleFile"] as? [String: Any])
        let value = String(
            decoding: try JSONSerialization.data(withJSONObject: singleFile, options: [.sortedKeys]), as: UTF8.self)
        let saved = try await H.raw(
            base, path(container, "records/modify"), query: query(token),
            body: #"{"zoneID":\#(lists),"operations":[{"operationType":"create","record":{"#
                + #""recordName":"milk","recordType":"Todo","fields":{"photo":{"value":\#(value),"type":"ASSETID"}}}}]}"#
        )
        #expect(saved.status == 200 && !saved.text.contains("serverErrorCode"), "\(saved.text)")
        return try await photoURL(base, token: token, container: container)
    }

    /// The `downloadURL` of `milk`'s photo, as a lookup by its owner hands it out now.
    static func photoURL(_ base: String, token: String, container: String = H.container) async throws -> String {
        let read = try await H.raw(
            base, path(container, "records/lookup"), query: query(token),
            body: #"{"zoneID":\#(lists),"records":[{"recordName":"milk"}]}"#)
        let record = try #require((read.json["records"] as? [[String: Any]])?.first, "\(read.text)")
        let photo = (record["fields"] as? [String: Any])?["photo"] as? [String: Any]
        return try #require((photo?["value"] as? [String: Any])?["downloadURL"] as? String, "\(read.text)")
    }

    /// The path of a private-database operation in `container`'s development environment.
    static func path(_ container: String, _ operation: String) -> String {
        "/database/1/\(container)/\(H.environment)/private/\(operation)"
    }
}
