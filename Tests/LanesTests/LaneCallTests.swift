import Foundation
import Lanes
import Recipe
import ShareKit
import Testing

/// Lanes calling lanes: private lanes, parameters as variables, cycles.
@Suite("Lane calls and parameters")
struct LaneCallTests {
    static let recipe = """
        sharelane: 1
        name: calls
        vars:
          title: Default
        users:
          ann: { email: ann@example.com }
        owner: ann
        zones:
          Box: { records: {} }
        lanes:
          write:
            desc: Saves the item with the title variable.
            private: true
            steps:
              - save: { zone: Box, record: item, type: Thing, fields: { title: "${title}" } }
          outer:
            steps:
              - lane: write
              - expect: { field: { zone: Box, record: item, name: title, equals: "${title}" } }
              - lane: { name: write, parameters: { title: From a parameter } }
              - expect: { field: { zone: Box, record: item, name: title, equals: From a parameter } }
          plain:
            steps:
              - lane: write
        """

    @Test func privateLaneIsRefusedFromTheCommandLine() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        try await harness.createZone("Box", ownerEmail: "ann@example.com")

        await #expect(throws: LaneError.self) { try await harness.run("write") }
        do {
            _ = try await harness.run("write")
        } catch let error as LaneError {
            #expect("\(error)".contains("lane 'write' is private"))
            #expect(error.location?.line == 11)
        }
        #expect(harness.output.isEmpty, "a refused lane printed steps: \(harness.output)")
        #expect(try await harness.record("item", zone: ZoneID(zoneName: "Box"), asEmail: "ann@example.com") == nil)
    }

    @Test func privateLaneRunsFromAnotherLane() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        try await harness.createZone("Box", ownerEmail: "ann@example.com")

        let report = try await harness.run("plain")

        #expect(report.succeeded, "\(harness.output)")
        #expect(report.steps.map(\.depth) == [1, 0])
        let item = try await harness.record("item", zone: ZoneID(zoneName: "Box"), asEmail: "ann@example.com")
        #expect(item?.fields["title"] == .string("Default"))
    }

    @Test func parametersOverrideVarsInCalledLanes() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        try await harness.createZone("Box", ownerEmail: "ann@example.com")

        let report = try await harness.run("outer")

        #expect(report.succeeded, "\(harness.output)")
        #expect(harness.output.contains("▸ lane write (title=From a parameter)"), "\(harness.output)")
        let item = try await harness.record("item", zone: ZoneID(zoneName: "Box"), asEmail: "ann@example.com")
        #expect(item?.fields["title"] == .string("From a parameter"))
    }

    @Test func commandLineParametersOverrideVars() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        try await harness.createZone("Box", ownerEmail: "ann@example.com")

        let report = try await harness.run("plain", overrides: ["title": "From the command line"])

        #expect(report.succeeded, "\(harness.output)")
        let item = try await harness.record("item", zone: ZoneID(zoneName: "Box"), asEmail: "ann@example.com")
        #expect(item?.fields["title"] == .string("From the command line"))
    }

    /// The recipe loader refuses lane cycles; the runner refuses them too, for recipes built in code.
    @Test func laneCycleIsRefused() async throws {
        let harness = try LaneHarness(recipe: Self.recipe)
        let here = SourceLocation(file: "built.yaml", line: 1, column: 1)
        let recipe = Recipe(
            name: "cycle", file: "built.yaml",
            users: [DeclaredUser(handle: "ann", email: "ann@example.com", location: here)],
            owner: "ann",
            lanes: [
                Lane(
                    name: "loop", steps: [Step(action: .lane(name: "again", parameters: [:]), location: here)],
                    location: here),
                Lane(
                    name: "again", steps: [Step(action: .lane(name: "loop", parameters: [:]), location: here)],
                    location: here),
            ])

        let report = try await harness.runner().run(lane: "loop", of: recipe)

        #expect(!report.succeeded)
        #expect(harness.output.contains("lanes call each other in a cycle: loop → again → loop"), "\(harness.output)")
    }
}
