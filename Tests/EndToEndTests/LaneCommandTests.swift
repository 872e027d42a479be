import Foundation
import SharelaneTestSupport
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

    /// Each test's own directory (Swift Testing makes a suite value per test), removed with it.
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory("e2e") }

    /// The recipe written into the test's directory, and a store file beside it.
    private func fixture() throws -> (recipe: String, store: String) {
        (try directory.write("parameters.yaml", Self.recipe), "sqlite:" + directory.file("store.sqlite"))
    }

    @Test func parameterOverridesVarsFromTheCommandLine() async throws {
        let (recipe, store) = try fixture()
        let result = try await SharelaneBinary.run([
            "run", "check", recipe, "title=From the command line", "--store", store,
        ])
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stdout.contains("✔ expect ann sees Box/item.title = \"From the command line\""), "\(result.output)")
    }

    @Test func failingExpectExitsOneWithItsLocation() async throws {
        let (recipe, store) = try fixture()
        let result = try await SharelaneBinary.run(["run", "check", recipe, "--store", store])
        #expect(result.status == 1, "\(result.output)")
        // The expect step is on line 17, its action at column 9.
        #expect(result.stdout.contains("\(recipe):17:9: error: expectation failed"), "\(result.output)")
        #expect(result.stdout.contains("found \"Default\""), "\(result.output)")
        #expect(result.stdout.contains("✘ lane check failed at \(recipe):17:9"), "\(result.output)")
    }

    @Test func privateLaneIsRefusedFromTheCommandLine() async throws {
        let (recipe, store) = try fixture()
        let result = try await SharelaneBinary.run(["run", "helper", recipe, "--store", store])
        #expect(result.status == 1)
        #expect(result.stderr.contains("lane 'helper' is private"), "\(result.output)")
        #expect(
            !FileManager.default.fileExists(atPath: directory.file("store.sqlite"))
                || !result.stdout.contains("apply"))
    }

    @Test func unknownLaneListsTheLanes() async throws {
        let (recipe, store) = try fixture()
        let result = try await SharelaneBinary.run(["run", "chek", recipe, "--store", store])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no lane named 'chek'"), "\(result.output)")
        #expect(result.stderr.contains("check"), "\(result.output)")
    }

    @Test func lanesListsPublicLanesAndHidesPrivateOnes() async throws {
        let (recipe, _) = try fixture()
        let result = try await SharelaneBinary.run(["lanes", recipe])
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.stdout.contains("check  The item's title is the one given on the command line."), "\(result.output)")
        #expect(!result.stdout.contains("helper  "), "\(result.output)")
        #expect(result.stdout.contains("1 private lane hidden"), "\(result.output)")
        let all = try await SharelaneBinary.run(["lanes", recipe, "--all"])
        #expect(all.stdout.contains("helper  (private) Only for other lanes."), "\(all.output)")
    }

    @Test func noRecipeFoundExitsOneAndSaysWhereItLooked() async throws {
        let result = try await SharelaneBinary.run(["run", "demo"], in: directory.url)
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.stderr.contains("none found at Recipes/sharelane.yaml or sharelane.yaml"), "\(result.output)")
    }
}
