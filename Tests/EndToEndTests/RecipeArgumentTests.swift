import Foundation
import SharelaneTestSupport
import Testing

/// Every command names its recipe the same way: `[RECIPE]` or `--recipe FILE`, else `Recipes/sharelane.yaml`,
/// else `sharelane.yaml`; `graph` draws to standard output without `--out`; a mistyped `--target` is refused
/// with the closest address, as a mistyped command or lane is.
@Suite("One way to name a recipe", .serialized)
struct RecipeArgumentTests {
    let directory: TemporaryDirectory
    var store: String { "sqlite:" + directory.file("store.sqlite") }

    init() throws {
        directory = try TemporaryDirectory("recipe-argument")
        try FileManager.default.createDirectory(
            at: directory.url.appendingPathComponent("Recipes"), withIntermediateDirectories: true)
        _ = try directory.write("Recipes/sharelane.yaml", Self.recipe)
        _ = try directory.write("other.yaml", Self.recipe.replacingOccurrences(of: "name: lists", with: "name: other"))
    }

    static let recipe = """
        sharelane: 1
        name: lists
        users:
          alice: { email: alice@example.com }
          bob: { email: bob@example.com }
        owner: alice
        zones:
          Lists:
            share: { participants: { bob: read-only } }
            records:
              groceries: { type: TodoList, fields: { title: Groceries } }
        """

    func run(_ arguments: [String]) async throws -> SharelaneBinary.Result {
        try await SharelaneBinary.run(arguments, in: directory.url, environment: ["NO_COLOR": "1"])
    }

    @Test("validate, plan, show, access, lanes and export take the recipe alike: default, positional, --recipe")
    func everyCommandAlike() async throws {
        #expect(try await run(["apply", "--yes", "--store", store]).status == 0)
        // The default recipe, with no argument at all, for validate too.
        let validated = try await run(["validate"])
        #expect(validated.status == 0, "\(validated.output)")
        #expect(validated.stdout.hasPrefix("Recipes/sharelane.yaml: OK: recipe `lists`"), "\(validated.output)")
        for command in [["validate"], ["plan", "--store", store], ["lanes"]] {
            let positional = try await run([command[0], "other.yaml"] + command.dropFirst())
            let option = try await run([command[0], "--recipe", "other.yaml"] + command.dropFirst())
            #expect(positional.status == 0, "\(command[0]): \(positional.output)")
            #expect(option.status == 0, "\(command[0]) --recipe: \(option.output)")
            #expect(positional.stdout == option.stdout, "\(command[0])")
        }
        #expect(
            try await run(["validate", "--recipe", "other.yaml"]).stdout.hasPrefix("other.yaml: OK: recipe `other`"))
        // show and export took only --recipe; access, graph and query only the positional.
        for command in [["show", "--as", "bob"], ["access"], ["export"]] {
            let positional = try await run([command[0], "other.yaml"] + command.dropFirst() + ["--store", store])
            let option = try await run(
                [command[0], "--recipe", "other.yaml"] + command.dropFirst() + ["--store", store])
            #expect(positional.status == 0, "\(command[0]): \(positional.output)")
            #expect(option.status == 0, "\(command[0]) --recipe: \(option.output)")
        }
        let twice = try await run(["plan", "other.yaml", "--recipe", "Recipes/sharelane.yaml", "--store", store])
        #expect(twice.status == 1)
        #expect(
            twice.stderr.contains(
                "the recipe is named twice ('other.yaml' and --recipe 'Recipes/sharelane.yaml'); name it once"),
            "\(twice.output)")
    }

    @Test("graph without --out writes the SVG on standard output")
    func graphToStandardOutput() async throws {
        #expect(try await run(["apply", "--yes", "--store", store]).status == 0)
        let graph = try await run(["graph", "--store", store])
        #expect(graph.status == 0, "\(graph.output)")
        #expect(graph.stdout.contains("<svg"), "\(graph.output)")
        #expect(graph.stderr.contains("Drew the sharing graph (1 share) as SVG on standard output"), "\(graph.output)")
    }

    @Test(
        "--target that names nothing the recipe declares: did you mean, exit 1; a declared one with no change: a note")
    func mistypedTarget() async throws {
        let typo = try await run(["plan", "--target", "zone List", "--store", store])
        #expect(typo.status == 1, "\(typo.output)")
        #expect(
            typo.stderr.contains("--target 'zone List' names nothing the recipe declares; did you mean 'zone Lists'?"),
            "\(typo.output)")
        #expect(try await run(["apply", "--yes", "--store", store]).status == 0)
        let unchanged = try await run(["plan", "--target", "zone Lists", "--store", store])
        #expect(unchanged.status == 0, "\(unchanged.output)")
        #expect(
            unchanged.stdout.contains("--target 'zone Lists' names nothing this plan changes."), "\(unchanged.output)")
    }
}
