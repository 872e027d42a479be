import Foundation
import ShareKit
import SharelaneTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking  // URLSession on Linux
#endif

/// `SharelaneEmulator.removeWorld`, as a Swift test suite calls it: the seeded world goes whole, and nothing
/// the emulator kept of it (its reset point, its people) brings it back.
@Suite struct WorldRemovalTests {
    /// The names of the zones in alice's private database of the seeded world.
    func zoneNames(_ emulator: SharelaneEmulator, token: String) async throws -> [String] {
        var url = try #require(URLComponents(string: emulator.baseURL))
        url.path = "/database/1/\(emulator.container)/\(emulator.environment.rawValue)/private/zones/list"
        url.queryItems = [
            .init(name: "ckAPIToken", value: emulator.apiToken), .init(name: "ckWebAuthToken", value: token),
        ]
        var request = URLRequest(url: try #require(url.url))
        request.httpMethod = "POST"
        request.httpBody = Data("{}".utf8)
        let (data, _) = try await URLSession.shared.data(for: request)
        let answer = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let zones = try #require(answer["zones"] as? [[String: Any]])
        return zones.compactMap { ($0["zoneID"] as? [String: Any])?["zoneName"] as? String }.sorted()
    }

    @Test(.sharelane(recipeFile: "Recipes/sharelane.yaml"))
    func aRemovedWorldIsNotSeededAgainByAReset() async throws {
        let emulator = try #require(SharelaneEmulator.current)
        let alice = try await emulator.webAuthToken(for: "alice")
        #expect(try await zoneNames(emulator, token: alice).contains("FamilyLists"))

        try await emulator.removeWorld(container: emulator.container)

        // Removed again before anything names it: nothing is left, and the emulator says so.
        let error = await #expect(throws: ShareError.self) {
            try await emulator.removeWorld(container: emulator.container)
        }
        #expect(error?.code == .notFound)
        #expect(error?.reason.contains("this store holds no world iCloud.com.example.Lists") == true)

        try await emulator.reset()
        #expect(try await zoneNames(emulator, token: alice) == ["_defaultZone"])
        // Its seeded people went with it.
        await #expect(throws: ShareError.self) { try await emulator.webAuthToken(for: "bob") }
    }
}
