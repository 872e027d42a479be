import Foundation
import Testing

/// `sharelane run` and `sharelane lanes` as a user meets them: exit codes, messages, parameters.
@Suite("sharelane run and lanes")
struct LaneCommandTests {
    /// A recipe whose `check` lane expects the title `From the command line`, while `vars` says `Default`.
    static let recipe = """
        sharelane: 1
        name: parameters
        vars:
          title: Default
        users:
          ann: { email: ann@example.com }
        owner: ann
        zones:
          Box:
            records:
              item: { type: Thing, fields: { title: "${title}" } }
        lanes:
          check:
            desc: The item's title is the one given on the command line.
            steps:
              - apply
              - expect: { field: { zone: Box, record: item, name: title, equals: From the command line } }
          helper:
            desc: Only for other lanes.
            private: true
            steps:
              - apply
        """

    private func fixture() throws -> (directory: URL, recipe: String, store: String) {
        let directory = try LaneBinary.temporaryDirectory()
        let recipe = directory.appendingPathComponent("parameters.yaml")
        try Self.recipe.write(to: recipe, atomically: true, encoding: .utf8)
        return (directory, recipe.path, "sqlite:" + directory.appendingPathComponent("store.sqlite").path)
    }

    @Test func parameterOverridesVarsFromTheCommandLine() throws {
        let (directory, recipe, store) = try fixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try LaneBinary.run(["run", "check", recipe, "title=From the command line", "--store", store])
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stdout.contains("✔ expect ann sees Box/item.title = \"From the command line\""), "\(result.output)")
    }

    @Test func failingExpectExitsOneWithItsLocation() throws {
        let (directory, recipe, store) = try fixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try LaneBinary.run(["run", "check", recipe, "--store", store])
        #expect(result.status == 1, "\(result.output)")
        // The expect step is on line 17, its action at column 9.
        #expect(result.stdout.contains("\(recipe):17:9: error: expectation failed"), "\(result.output)")
        #expect(result.stdout.contains("found \"Default\""), "\(result.output)")
        #expect(result.stdout.contains("✘ lane check failed at \(recipe):17:9"), "\(result.output)")
    }

    @Test func privateLaneIsRefusedFromTheCommandLine() throws {
        let (directory, recipe, store) = try fixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try LaneBinary.run(["run", "helper", recipe, "--store", store])
        #expect(result.status == 1)
        #expect(result.stderr.contains("lane 'helper' is private"), "\(result.output)")
        #expect(
            !FileManager.default.fileExists(atPath: directory.appendingPathComponent("store.sqlite").path)
                || !result.stdout.contains("apply"))
    }

    @Test func unknownLaneListsTheLanes() throws {
        let (directory, recipe, store) = try fixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try LaneBinary.run(["run", "chek", recipe, "--store", store])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no lane named 'chek'"), "\(result.output)")
        #expect(result.stderr.contains("check"), "\(result.output)")
    }

    @Test func lanesListsPublicLanesAndHidesPrivateOnes() throws {
        let (directory, recipe, _) = try fixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try LaneBinary.run(["lanes", recipe])
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stdout.contains("check  The item's title is the one given on the command line."), "\(result.output)")
        #expect(!result.stdout.contains("helper  "), "\(result.output)")
        #expect(result.stdout.contains("1 private lane hidden"), "\(result.output)")
        let all = try LaneBinary.run(["lanes", recipe, "--all"])
        #expect(all.stdout.contains("helper  (private) Only for other lanes."), "\(all.output)")
    }

    @Test func noRecipeFoundExitsOneAndSaysWhereItLooked() throws {
        let directory = try LaneBinary.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try LaneBinary.run(["run", "demo"], in: directory)
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.stderr.contains("none found at Recipes/sharelane.yaml or sharelane.yaml"), "\(result.output)")
    }
}
