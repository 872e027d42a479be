import Foundation
import SharelaneTestSupport
import Recipe
import Testing

/// Every recipe in `Recipes/` validates, with the loader and against `Recipes/recipe.schema.json`.
@Suite("Recipes directory")
struct RecipesDirectoryTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let recipesDirectory = packageRoot.appendingPathComponent("Recipes")

    /// The recipes' file names; an empty or missing folder is an error, not zero cases.
    static func recipes() throws -> [String] { try FixtureFolder(recipesDirectory).files().map(\.lastPathComponent) }

    @Test("there are recipes to check")
    func notEmpty() throws {
        #expect(try Self.recipes().contains("sharelane.yaml"))
    }

    @Test("each recipe loads and validates", arguments: try recipes())
    func validates(_ name: String) throws {
        let path = Self.recipesDirectory.appendingPathComponent(name).path
        do {
            _ = try RecipeLoader(environment: [:]).load(path: path)
        } catch {
            Issue.record("\(name) is invalid:\n\(error)")
        }
    }

    static let validatorScript = """
        import datetime, json, sys
        try:
            import jsonschema, yaml
        except ImportError as e:
            print("MISSING " + str(e)); sys.exit(3)
        class Loader(yaml.SafeLoader): pass
        def tagged(loader, suffix, node):
            if isinstance(node, yaml.ScalarNode): return loader.construct_scalar(node)
            if isinstance(node, yaml.SequenceNode): return loader.construct_sequence(node)
            return loader.construct_mapping(node)
        Loader.add_multi_constructor("!", tagged)
        def plain(x):
            # JSON has no dates: editors see YAML timestamps as strings.
            if isinstance(x, (datetime.date, datetime.datetime)): return x.isoformat()
            if isinstance(x, dict): return {str(k): plain(v) for k, v in x.items()}
            if isinstance(x, list): return [plain(v) for v in x]
            return x
        schema = json.load(open(sys.argv[1]))
        jsonschema.Draft7Validator.check_schema(schema)
        validator = jsonschema.Draft7Validator(schema)
        failed = False
        for path in sys.argv[2:]:
            for error in validator.iter_errors(plain(yaml.load(open(path), Loader=Loader))):
                failed = True
                print(path + ": " + "/".join(str(p) for p in error.absolute_path) + ": " + error.message[:300])
        sys.exit(1 if failed else 0)
        """

    /// Runs the schema check with python3's `jsonschema`; returns nil when python3 or the modules are missing.
    static func runSchemaCheck(_ files: [String]) throws -> (status: Int32, output: String)? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["python3", "-c", validatorScript, recipesDirectory.appendingPathComponent("recipe.schema.json").path]
            + files
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        // 127: env found no python3; 3: python3 lacks the modules.
        if process.terminationStatus == 127 || (process.terminationStatus == 3 && output.hasPrefix("MISSING")) {
            return nil
        }
        return (process.terminationStatus, output)
    }

    @Test("each recipe, and each valid fixture, matches the JSON Schema")
    func schema() throws {
        var files = try Self.recipes().map { Self.recipesDirectory.appendingPathComponent($0).path }
        files += try Fixtures.files(in: "valid").map(\.path)
        guard let result = try Self.runSchemaCheck(files) else {
            print(
                "skipped: the JSON Schema check needs python3 with the jsonschema and yaml modules (pip install jsonschema pyyaml)"
            )
            return
        }
        #expect(result.status == 0, "\(result.output)")
    }

    @Test("the schema rejects what the loader rejects: an unknown key and a bad permission")
    func schemaRejects() throws {
        let scratch = try TemporaryDirectory("recipe")
        let bad = try scratch.write(
            "bad.yaml",
            """
            sharelane: 1
            name: bad
            users: { alice: { email: a@example.com } }
            zones: { Z: { share: { public_permission: public, titel: x } } }
            """)
        guard let result = try Self.runSchemaCheck([bad]) else {
            print("skipped: the JSON Schema check needs python3 with the jsonschema and yaml modules")
            return
        }
        #expect(result.status == 1)
    }
}
