import Foundation
import ShareKit
import SharelaneTestSupport
import Testing

/// An asset's `downloadURL` as CloudKit hands it out, over a real `sharelane serve`: issued with the record
/// that holds the asset, good without credentials in the world it was handed out in until it expires (an
/// hour), and refused otherwise, as a name that does not exist (404) or, once expired, `410 Gone`.
@Suite(.serialized) struct AssetDownloadURLTests {
    typealias H = EmulatorHarness
    typealias A = AssetWireTests

    /// GET of a download URL, its `${f}` replaced by a file name, without credentials.
    static func download(_ url: String) async throws -> (status: Int, bytes: [UInt8], json: [String: Any]) {
        try await A.http(url.replacingOccurrences(of: "${f}", with: "photo.png"), method: "GET")
    }

    /// The URL with one query value replaced.
    static func replacing(_ name: String, with value: String, in url: String) throws -> String {
        var components = try #require(URLComponents(string: url.replacingOccurrences(of: "${f}", with: "photo.png")))
        components.queryItems = components.queryItems?.map {
            $0.name == name ? URLQueryItem(name: name, value: value) : $0
        }
        return try #require(components.string)
    }

    /// The answer a name that does not exist gets, with the checksum of the refused URL in its place.
    static func expectNotFound(_ answer: (status: Int, bytes: [UInt8], json: [String: Any]), checksum: String) {
        #expect(answer.status == 404, "\(String(decoding: answer.bytes, as: UTF8.self))")
        #expect(answer.json["serverErrorCode"] as? String == "NOT_FOUND")
        #expect(answer.json["reason"] as? String == "no asset \(checksum) is kept here", "\(answer.json)")
    }

    @Test(
        "a downloadURL answers its bytes as handed out, without credentials; without its query, guessed from the content, altered, or moved to another world it answers 404 as a name that does not exist"
    )
    func onlyTheIssuedURLAnswers() async throws {
        try await H.withEmulator { base in
            let token = try await A.seed(base)
            let url = try await A.savedPhoto(base, token: token, bytes: A.picture)
            let checksum = FNV1a64.checksum(of: A.picture)
            #expect(url.hasPrefix(base + "/assets/download/\(checksum)/${f}?"), "\(url)")

            let issued = try await Self.download(url)
            #expect(issued.status == 200)
            #expect(issued.bytes == A.picture)
            // Again, with no credentials: a bearer URL, good until it expires.
            #expect(try await Self.download(url).bytes == A.picture)

            // What a name that never existed answers.
            Self.expectNotFound(
                try await A.http(base + "/assets/download/fnv1a64:0123456789abcdef/photo.png", method: "GET"),
                checksum: "fnv1a64:0123456789abcdef")
            // Guessed from the content (the checksum is FNV-1a of the bytes): the same answer.
            Self.expectNotFound(
                try await A.http(base + "/assets/download/\(checksum)/photo.png", method: "GET"), checksum: checksum)
            // Altered: another signature, a later expiry.
            let signature = try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "s" }?.value)
            let forged = String(signature.reversed())
            Self.expectNotFound(
                try await A.http(try Self.replacing("s", with: forged, in: url), method: "GET"), checksum: checksum)
            let expiry = try #require(
                Int(URLComponents(string: url)?.queryItems?.first { $0.name == "e" }?.value ?? ""))
            Self.expectNotFound(
                try await A.http(try Self.replacing("e", with: String(expiry + 86_400), in: url), method: "GET"),
                checksum: checksum)

            // Another world keeps the same bytes: the URL handed out in this one still does not reach them there.
            let other = "iCloud.com.example.Other"
            let zone = try await H.raw(
                base, A.path(other, "zones/modify"), query: A.query(token),
                body: #"{"operations":[{"operationType":"create","zone":{"zoneID":\#(A.lists)}}]}"#)
            #expect(zone.status == 200, "\(zone.text)")
            let otherURL = try await A.savedPhoto(base, token: token, bytes: A.picture, container: other)
            #expect(try await Self.download(otherURL).bytes == A.picture, "its own world's URL answers")
            Self.expectNotFound(
                try await A.http(try Self.replacing("ckc", with: other, in: url), method: "GET"), checksum: checksum)
            Self.expectNotFound(
                try await A.http(try Self.replacing("cke", with: "production", in: url), method: "GET"),
                checksum: checksum)
        }
    }

    @Test(
        "a downloadURL is good for an hour by the emulator's clock, then answers 410 Gone saying to read the record again; the read hands out a fresh one"
    )
    func aDownloadURLExpires() async throws {
        // The emulator's clock stands where it was made until the test moves it: the URL's hour starts between
        // then and the answer, however long a busy machine makes the requests take.
        let before = Int(Date().timeIntervalSince1970)
        let clock = MovableClock()
        try await H.withEmulator(clock: clock.emulatorClock) { base in
            let token = try await A.seed(base)
            let url = try await A.savedPhoto(base, token: token, bytes: A.picture)
            let after = Int(Date().timeIntervalSince1970)
            let expiry = try #require(
                Int(URLComponents(string: url)?.queryItems?.first { $0.name == "e" }?.value ?? ""))
            // `e=` is the expiry in UNIX seconds, as in Apple's URLs: an hour from when the URL was made.
            #expect(
                (before + 3600 - 1...after + 3600 + 1).contains(expiry),
                "e=\(expiry), made between \(before) and \(after)")

            clock.advance(by: .seconds(3600 - 10))
            #expect(try await Self.download(url).status == 200, "still good just before the hour")
            clock.advance(by: .seconds(11))
            let late = try await Self.download(url)
            #expect(late.status == 410, "\(late.json)")
            #expect(late.json["serverErrorCode"] as? String == "NOT_FOUND")
            let reason = late.json["reason"] as? String ?? ""
            #expect(reason.contains("expired") && reason.contains("1 hour") && reason.contains("read the record again"))
            #expect(late.bytes != A.picture, "no bytes after expiry")

            // An hour on, Alice's web auth token expired too: she signs in again and reads the record.
            let (again, _) = try await H.signIn(base, "alice@example.com")
            let fresh = try await A.photoURL(base, token: again)
            #expect(fresh != url)
            #expect(try await Self.download(fresh).bytes == A.picture)
        }
    }
}
