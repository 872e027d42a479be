import Foundation
import SharelaneTesting
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking  // URLSession on Linux
#endif

@Suite struct FamilyListsTests {
    @Test(.sharelane(recipeFile: "Recipes/sharelane.yaml", lanes: ["demo"]))
    func bobsTokenReachesTheSharedZone() async throws {
        let emulator = try #require(SharelaneEmulator.current)
        let token = try await emulator.webAuthToken(for: "bob")
        var url = try #require(URLComponents(string: emulator.baseURL))
        url.path = "/database/1/\(emulator.container)/\(emulator.environment.rawValue)/shared/zones/list"
        url.queryItems = [
            .init(name: "ckAPIToken", value: emulator.apiToken), .init(name: "ckWebAuthToken", value: token),
        ]
        var request = URLRequest(url: try #require(url.url))
        request.httpMethod = "POST"
        request.httpBody = Data("{}".utf8)
        let (data, _) = try await URLSession.shared.data(for: request)
        #expect(String(decoding: data, as: UTF8.self).contains("FamilyLists"))

        try await emulator.snapshot("before")  // keep this state
        try await emulator.reset()  // back to the seeded state
        try await emulator.restore("before")  // and back again
    }
}
