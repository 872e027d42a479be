import Foundation
import SharelaneTesting
import Testing
import TripService

/// Parallel tests on one emulator, each in a world of its own, resetting in a loop: none sees another's data.
@Suite struct ParallelWorldTests {
    static let shared = Task { try await SharelaneEmulator.start(recipeFile: "Recipes/trips.yaml", lanes: ["shared"]) }

    @Test(arguments: 0..<8)
    func eachWorldKeepsItsOwnStops(worker: Int) async throws {
        let world = try await Self.shared.value.world()
        let trips = TripService(
            client: CloudKitClient(
                baseURL: world.emulator.baseURL, container: world.container,
                environment: world.environment.rawValue, apiToken: world.emulator.apiToken))
        let alice = try world.webAuthToken(for: "alice")
        let bob = try world.webAuthToken(for: "bob")
        let owner = try #require(world.userRecordName(for: "alice"))
        for round in 0..<3 {
            // Bob, a participant, adds a stop through his shared database; alice sees it in her own.
            let name = "stop-\(worker)-\(round)"
            let added = try await trips.addStop(name, title: "Stop \(round)", zone: "Italy", owner: owner, token: bob)
            #expect(added.records.first?["recordName"] as? String == name, "\(added.json)")
            #expect(try await trips.stops(zone: "Italy", token: alice) == [name, "rome"].sorted())
            try await world.reset()
            #expect(
                try await trips.stops(zone: "Italy", token: alice) == ["rome"], "round \(round) of worker \(worker)")
        }
        try await world.remove()
    }
}
