import Foundation
import SharelaneTesting
import Testing

/// A lane that fails while seeding says where and what, as `sharelane run` does.
@Suite struct SeedingFailureTests {
    @Test func aFailingLaneNamesItsStepsPlaceAndWhatItFound() async throws {
        let recipe = "Recipes/trips.yaml"
        let lines = try String(contentsOfFile: recipe, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        let line = try #require(lines.firstIndex { $0.contains("records: 5") }) + 1
        let failure = await #expect(throws: FixtureSeeder.Failure.self) {
            let emulator = try await SharelaneEmulator.start(recipeFile: recipe, lanes: ["broken"])
            await emulator.stop()
        }
        let description = try #require(failure).description
        #expect(description.contains("\(recipe):\(line):"), "\(description)")
        #expect(description.contains("expected 5 records in Italy as alice sees it, found 1"), "\(description)")
        #expect(failure?.lane == "broken", "\(description)")
    }
}
