import Foundation
import SharelaneTestSupport
import Testing

/// `${NAME}` in an `include:` path, through the binary: the recipe's `vars:`, `--var`, a lane's parameters
/// and the environment choose the file; an unknown name is an error at its place.
@Suite("Variables in include paths")
struct IncludePathVariableTests {
    static let recipe = """
        sharelane: 1
        name: staged
        vars:
          stage: staging
        include:
          - stages/${stage}.yaml
        users:
          alice: { email: alice@example.com }
        owner: alice
        zones:
          Household: {}

        """

    func folder() throws -> TemporaryDirectory {
        let scratch = try TemporaryDirectory("e2e")
        try scratch.write("stages/staging.yaml", "zones:\n  StagingOnly: {}\n")
        try scratch.write("stages/production.yaml", "zones:\n  ProductionOnly: {}\n")
        return scratch
    }

    @Test("the recipe's vars:, --var and the environment choose the included file")
    func variablesChooseTheFile() async throws {
        let scratch = try folder()
        let path = try scratch.write("staged.yaml", Self.recipe)
        let staging = try await SharelaneBinary.run(["plan", path, "--store", "memory:"])
        #expect(staging.status == 0, "\(staging.output)")
        #expect(staging.stdout.contains("+ zone StagingOnly"), "\(staging.output)")

        let production = try await SharelaneBinary.run([
            "plan", path, "--store", "memory:", "--var", "stage=production",
        ])
        #expect(production.status == 0, "\(production.output)")
        #expect(production.stdout.contains("+ zone ProductionOnly"), "\(production.output)")
        #expect(!production.stdout.contains("StagingOnly"), "\(production.output)")

        // A variable that only the environment sets.
        let fromEnvironment = try scratch.write(
            "from-env.yaml", Self.recipe.replacingOccurrences(of: "vars:\n  stage: staging\n", with: ""))
        let environment = try await SharelaneBinary.run(
            ["plan", fromEnvironment, "--store", "memory:"], environment: ["stage": "production"])
        #expect(environment.status == 0, "\(environment.output)")
        #expect(environment.stdout.contains("+ zone ProductionOnly"), "\(environment.output)")
    }

    @Test("an unknown variable in an include path is an error at its place, with the nearest name")
    func unknownVariableIsAnErrorAtItsPlace() async throws {
        let scratch = try folder()
        let path = try scratch.write(
            "staged.yaml", Self.recipe.replacingOccurrences(of: "stages/${stage}", with: "stages/${stgae}"))
        let result = try await SharelaneBinary.run(["validate", path])
        #expect(result.status == 1, "\(result.output)")
        #expect(
            result.output.contains("staged.yaml:6:12: error: unknown variable `stgae`; did you mean `stage`?"),
            "\(result.output)")
    }
}
