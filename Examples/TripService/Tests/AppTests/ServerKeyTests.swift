import Crypto
import Foundation
import SharelaneTesting
import Testing
import TripService

/// The server's own writes to the public database, signed with its server-to-server key, on an emulator
/// configured with the key's public half.
@Suite struct ServerKeyTests {
    let serverKey = P256.Signing.PrivateKey()

    func emulator() async throws -> SharelaneEmulator {
        var configuration = SharelaneEmulator.Configuration()
        try configuration.addServerKey(id: "trips-server", pem: serverKey.publicKey.pemRepresentation)
        return try await SharelaneEmulator.start(recipeFile: "Recipes/trips.yaml", configuration: configuration)
    }

    func service(_ emulator: SharelaneEmulator) -> TripService {
        TripService(
            client: CloudKitClient(
                baseURL: emulator.baseURL, container: emulator.container,
                environment: emulator.environment.rawValue, apiToken: emulator.apiToken))
    }

    @Test func aSignedNoticeIsSavedAndEveryoneReadsIt() async throws {
        let emulator = try await emulator()
        let trips = service(emulator)
        let saved = try await trips.postNotice(
            "opening", text: "Trips open", as: .server(keyID: "trips-server", key: serverKey))
        #expect(saved.status == 200, "\(String(decoding: saved.body, as: UTF8.self))")
        #expect(saved.records.first?["recordName"] as? String == "opening")

        let read = try await trips.client.post(
            "public", "records/lookup", body: Data(#"{"records":[{"recordName":"opening"}]}"#.utf8),
            as: .user(webAuthToken: try await emulator.webAuthToken(for: "bob")))
        #expect(read.records.first?["recordType"] as? String == "Notice", "\(read.json)")
        await emulator.stop()
    }

    @Test func aRequestSignedWithAnotherKeyIsRefusedAndSavesNothing() async throws {
        let emulator = try await emulator()
        let trips = service(emulator)
        let stranger = P256.Signing.PrivateKey()
        let refused = try await trips.postNotice(
            "forged", text: "Free trips", as: .server(keyID: "trips-server", key: stranger))
        #expect(refused.status == 401, "\(String(decoding: refused.body, as: UTF8.self))")
        #expect(refused.json["serverErrorCode"] as? String == "AUTHENTICATION_FAILED", "\(refused.json)")

        let read = try await trips.client.post(
            "public", "records/lookup", body: Data(#"{"records":[{"recordName":"forged"}]}"#.utf8),
            as: .user(webAuthToken: try await emulator.webAuthToken(for: "bob")))
        #expect(read.records.first?["serverErrorCode"] as? String == "NOT_FOUND", "\(read.json)")
        await emulator.stop()
    }
}
