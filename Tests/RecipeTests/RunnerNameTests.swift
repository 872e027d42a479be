import Foundation
import Recipe
import Testing

/// `${lane}`, `${lane_error}` and a `register:`ed name are values a running lane sets; a value given for one
/// under the same name would never be read, so it is refused where it is given.
@Suite("Names a running lane sets")
struct RunnerNameTests {
    static let yaml = """
        sharelane: 1
        name: runner-names
        users: { alice: { email: alice@example.com } }
        zones: { Z: {} }
        vars: { ticket: QA-1 }
        lanes:
          main:
            - sh: "echo ${lane} ${ticket}"
            - sh: { run: "echo hi", register: found }
            - lane: { name: helper, parameters: { ticket: QA-2 } }
          helper:
            - sh: "echo ${found} ${ticket}"
        """

    func errors(_ yaml: String, overrides: [String: String] = [:], fileOnly: Set<String> = []) -> RecipeErrors? {
        var loader = RecipeLoader(environment: [:], overrides: overrides)
        loader.fileOnlyOverrides = fileOnly
        do {
            _ = try loader.load(yaml: yaml, file: "names.yaml")
            return nil
        } catch {
            return error
        }
    }

    @Test("the recipe as written loads")
    func plainRecipeLoads() {
        #expect(errors(Self.yaml) == nil)
    }

    @Test("--var lane=… is refused with what sets `lane`, where the recipe reads ${lane}")
    func varNamedLane() throws {
        let found = try #require(errors(Self.yaml, overrides: ["lane": "other"]))
        #expect(
            found.errors.map(\.message) == [
                "variable `lane` cannot be set: the lane runner sets it to the name of the lane running; it is given "
                    + "a value, which no `${lane}` would read. Give the value another name"
            ])
    }

    @Test("--var naming a registered value is refused; in a --var-file it is a warning")
    func varNamedRegistered() throws {
        let found = try #require(errors(Self.yaml, overrides: ["found": "x"]))
        #expect(found.errors.count == 1)
        #expect(found.errors.first?.message.contains("a lane step registers it (`register: found`)") == true)
        #expect(errors(Self.yaml, overrides: ["found": "x"], fileOnly: ["found"]) == nil)
    }

    @Test("vars: declaring `lane_error` is refused at its key")
    func varsNamedLaneError() throws {
        let yaml = Self.yaml.replacingOccurrences(
            of: "vars: { ticket: QA-1 }", with: "vars:\n  ticket: QA-1\n  lane_error: x")
        let found = try #require(errors(yaml))
        #expect(found.errors.count == 1)
        let error = try #require(found.errors.first)
        #expect(
            error.message.hasPrefix(
                "variable `lane_error` cannot be set: the lane runner sets it to what made the lane fail"))
        #expect(error.location?.line == 7)
        #expect(error.location?.column == 3)
    }

    @Test("a lane: step's parameter named `lane` is refused at the parameter")
    func parameterNamedLane() throws {
        let yaml = Self.yaml.replacingOccurrences(
            of: "parameters: { ticket: QA-2 }", with: "parameters: { ticket: QA-2, lane: other }")
        let found = try #require(errors(yaml))
        #expect(found.errors.count == 1)
        let error = try #require(found.errors.first)
        #expect(error.message.hasPrefix("variable `lane` cannot be set: the lane runner sets it"))
        #expect(error.message.contains("this step's parameter sets it"))
        #expect(error.location?.line == 10)
    }
}
