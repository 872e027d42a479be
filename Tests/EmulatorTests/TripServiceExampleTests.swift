import Crypto
import Foundation
import SharelaneTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking  // URLSession on Linux
#endif

/// The server's key for the public database: the emulator is given its public half.
let serverKey = P256.Signing.PrivateKey()

@Suite struct TripServiceTests {
    /// One emulator for the suite, seeded once; each test takes a world of its own on it, so they run in parallel.
    static let shared = Task {
        var configuration = SharelaneEmulator.Configuration()
        // serve --server-key server-key=FILE: public-database requests signed with the key are the server's.
        try configuration.addServerKey(id: "server-key", pem: serverKey.publicKey.pemRepresentation)
        return try await SharelaneEmulator.start(
            recipeFile: "Recipes/sharelane.yaml", lanes: ["demo"], configuration: configuration)
    }

    /// POSTs `body` to `operation` of `database` in `world`: as the user of `token`, or signed with the server key.
    func call(
        _ world: SharelaneWorld, _ database: String, _ operation: String, token: String? = nil, body: String
    ) async throws -> [String: Any] {
        let path = "/database/1/\(world.container)/\(world.environment.rawValue)/\(database)/\(operation)"
        var url = try #require(URLComponents(string: world.emulator.baseURL + path))
        if let token {
            url.queryItems = [
                .init(name: "ckAPIToken", value: world.emulator.apiToken), .init(name: "ckWebAuthToken", value: token),
            ]
        }
        var request = URLRequest(url: try #require(url.url))
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        if token == nil {
            // Apple's server-to-server signature: DATE:BASE64(SHA256(BODY)):PATH, signed with the key (a signed
            // request carries no query, so the path is all the URL after the host).
            let date = ISO8601DateFormatter().string(from: Date())
            let bodyHash = Data(SHA256.hash(data: Data(body.utf8))).base64EncodedString()
            let signature = try serverKey.signature(for: Data("\(date):\(bodyHash):\(path)".utf8))
            request.setValue("server-key", forHTTPHeaderField: "X-Apple-CloudKit-Request-KeyID")
            request.setValue(date, forHTTPHeaderField: "X-Apple-CloudKit-Request-ISO8601Date")
            request.setValue(
                signature.derRepresentation.base64EncodedString(),
                forHTTPHeaderField: "X-Apple-CloudKit-Request-SignatureV1")
        }
        let (data, _) = try await URLSession.shared.data(for: request)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func bobAddsToTheListAliceShared() async throws {
        let world = try await Self.shared.value.world()
        // In bob's shared database the zone is alice's: its zoneID names her user record.
        let alice = try #require(world.userRecordName(for: "alice"))
        let zoneID = #"{"zoneName":"FamilyLists","ownerRecordName":"\#(alice)"}"#
        let saved = try await call(
            world, "shared", "records/modify", token: try world.webAuthToken(for: "bob"),
            body: #"{"zoneID":\#(zoneID),"operations":[{"operationType":"create","record":"#
                + #"{"recordName":"bread","recordType":"Todo","fields":{"title":{"value":"Bread"}}}}]}"#)
        #expect((saved["records"] as? [[String: Any]])?.first?["recordName"] as? String == "bread")

        let found = try await call(
            world, "private", "records/lookup", token: try world.webAuthToken(for: "alice"),
            body: #"{"zoneID":{"zoneName":"FamilyLists"},"records":[{"recordName":"bread"}]}"#)
        #expect((found["records"] as? [[String: Any]])?.first?["recordType"] as? String == "Todo")
        try await world.remove()
    }

    @Test func theServerPostsToThePublicDatabase() async throws {
        let world = try await Self.shared.value.world()
        let saved = try await call(
            world, "public", "records/modify",
            body: #"{"operations":[{"operationType":"create","record":"#
                + #"{"recordName":"notice","recordType":"Notice","fields":{"text":{"value":"Trip on"}}}}]}"#)
        #expect((saved["records"] as? [[String: Any]])?.first?["recordName"] as? String == "notice", "\(saved)")

        // Everyone reads it; bob's world-mates in other tests never see it.
        let read = try await call(
            world, "public", "records/lookup", token: try world.webAuthToken(for: "bob"),
            body: #"{"records":[{"recordName":"notice"}]}"#)
        #expect((read["records"] as? [[String: Any]])?.first?["recordType"] as? String == "Notice")
        try await world.reset()
        let afterReset = try await call(
            world, "public", "records/lookup", token: try world.webAuthToken(for: "bob"),
            body: #"{"records":[{"recordName":"notice"}]}"#)
        #expect((afterReset["records"] as? [[String: Any]])?.first?["serverErrorCode"] as? String == "NOT_FOUND")
        try await world.remove()
    }
}
