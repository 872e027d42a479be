import Foundation
import SharelaneTestSupport
import Recipe
import Testing

/// Hostile or broken input ends in a clear error within bounded time and memory, never a crash. The errors show
/// the bound: a file refused by its size was not read, an endless one was read only to the limit. How fast is
/// for `Scripts/bench.sh`; timed here, a busy machine would fail them.
@Suite("Robustness")
struct RobustnessTests {
    static let header = "sharelane: 1\nname: robust\nusers: { alice: { email: a@example.com } }\n"

    func expectError(
        _ yaml: String, containing text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
        let errors = loadErrors(yaml: yaml, file: "robust.yaml")
        #expect(!errors.isEmpty, sourceLocation: sourceLocation)
        #expect(
            errors.contains { $0.description.contains(text) }, "got: \(errors.map(\.description))",
            sourceLocation: sourceLocation)
    }

    @Test("malformed YAML is located")
    func malformed() {
        expectError(Self.header + "zones: [unclosed\n", containing: "robust.yaml:")
        expectError(Self.header + "zones:\n  Z: { records: \"x }\n", containing: "malformed YAML")
        expectError("\t- tab\n:\n", containing: "malformed YAML")
    }

    @Test("binary junk is refused as not being text")
    func binaryJunk() throws {
        let scratch = try TemporaryDirectory("recipe")
        var random = SystemRandomNumberGenerator()
        let bytes = (0..<65_536).map { _ in UInt8.random(in: 0...255, using: &random) }
        let path = scratch.url.appendingPathComponent("junk.yaml").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let errors = loadErrors(path)
        #expect(errors.count == 1)
        let message = errors.first?.message ?? ""
        #expect(message.contains("binary") || message.contains("UTF-8"), "got \(message)")

        // Valid UTF-8 that is not a recipe: control characters.
        let control = loadErrors(yaml: "\u{01}\u{02}\u{7F}zones: {}", file: "control.yaml")
        #expect(control.first?.message.contains("malformed YAML") == true)
    }

    @Test("a 50 MB file is refused by its size")
    func hugeFile() throws {
        let scratch = try TemporaryDirectory("recipe")
        let path = scratch.url.appendingPathComponent("huge.yaml").path
        let line = Data("# padding padding padding padding padding padding padding padding padding\n".utf8)
        var data = Data(Self.header.utf8)
        data.reserveCapacity(50 * 1024 * 1024 + line.count)
        while data.count < 50 * 1024 * 1024 { data.append(line) }
        try data.write(to: URL(fileURLWithPath: path))
        let errors = loadErrors(path)
        #expect(errors.count == 1)
        #expect(
            errors.first?.description.hasSuffix(
                "huge.yaml: error: the file is 50 MB; recipes are limited to 16 MB (generate large data sets with `repeat:`)"
            ) == true, "got \(errors)")
    }

    @Test("an endless file (a device) is read only up to the limit")
    func endlessFile() {
        guard FileManager.default.fileExists(atPath: "/dev/zero") else { return }
        let errors = loadErrors("/dev/zero")
        #expect(errors.map(\.description) == ["/dev/zero: error: the file is larger than 16 MB, the limit for recipes"])
    }

    @Test("10,000 levels of nesting are refused")
    func deepNesting() {
        let depth = 10_000
        expectError(
            String(repeating: "[", count: depth) + String(repeating: "]", count: depth), containing: "nests deeper")
        expectError(
            String(repeating: "{a: ", count: depth) + "1" + String(repeating: "}", count: depth),
            containing: "nests deeper")
        // Block nesting costs its depth in indentation on every line: 2,000 levels (past libyaml's 1,000).
        var block = ""
        for level in 0..<2_000 { block += String(repeating: " ", count: level) + "k\(level):\n" }
        expectError(block, containing: "nests deeper")
        expectError(String(repeating: "- ", count: depth) + "x\n", containing: "nests deeper")
        // Below libyaml's limit but above the loader's.
        expectError(
            Self.header + "zones: " + String(repeating: "[", count: 500) + String(repeating: "]", count: 500),
            containing: "nests deeper than 200 levels")
    }

    @Test("aliases that expand exponentially (billion laughs) stop at the node limit")
    func billionLaughs() {
        var yaml = Self.header + "x-lol0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        for level in 1...20 {
            let refs = Array(repeating: "*l\(level - 1)", count: 10).joined(separator: ", ")
            yaml += "x-lol\(level): &l\(level) [\(refs)]\n"
        }
        expectError(yaml, containing: "expands to more than 2000000 YAML nodes")
    }

    @Test("an alias used as a mapping key is refused before Yams hashes it")
    func aliasAsKey() {
        var yaml = Self.header + "x-a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...30 {
            yaml += "x-a\(level): &a\(level) [*a\(level - 1), *a\(level - 1), *a\(level - 1), *a\(level - 1)]\n"
        }
        expectError(yaml + "x-key: { *a30 : boom }\n", containing: "an alias is used as a mapping key")
        expectError(yaml + "x-key:\n  ? *a30\n  : boom\n", containing: "an alias is used as a mapping key")
        expectError(yaml + "x-key: { [*a30]: boom }\n", containing: "an alias is used as a mapping key")
    }

    @Test("aliases used normally work, and merge keys fill in")
    func aliasesWork() throws {
        let recipe = try RecipeLoader(environment: [:]).load(
            yaml: Self.header + """
                x-todo: &todo { type: Todo, fields: { done: false } }
                zones:
                  Z:
                    records:
                      a: *todo
                      b: { <<: *todo, fields: { done: true } }
                """, file: "aliases.yaml")
        let records = recipe.zones[0].records
        #expect(records.map(\.type) == ["Todo", "Todo"])
        #expect(records[0].fields["done"] == .value(.int64(0)))
        #expect(records[1].fields["done"] == .value(.int64(1)))
    }

    @Test("a huge repeat is bounded and one broken template is reported once")
    func repeatBounds() {
        expectError(
            Self.header + "zones: { Z: { records: { \"r-{{i}}\": { repeat: 100000000, type: T } } } }\n",
            containing: "between 0 and 1000000")
        let errors = loadErrors(
            yaml: Self.header
                + "zones: { Z: { records: { \"r-{{i}}\": { repeat: 1000, type: T, fields: { x: \"{{nope}}\" } } } } }\n",
            file: "r.yaml")
        #expect(errors.count == 1)
    }

    @Test("an empty file and a document that is not a mapping say what a recipe is")
    func notARecipe() {
        expectError("", containing: "the recipe is empty")
        expectError("- a\n- b\n", containing: "a recipe must be a mapping")
        expectError("just text", containing: "a recipe must be a mapping")
    }

    @Test("a record over CloudKit's 1 MB and an email address over 254 characters are refused with their location")
    func cloudKitLimitsAtValidation() {
        let long = String(repeating: "a", count: 300) + "@example.com"
        let text = String(repeating: "x", count: (1 << 20) + 10)
        let errors = loadErrors(
            yaml: """
                sharelane: 1
                name: limits
                users: { alice: { email: alice@example.com }, bob: { email: \(long) } }
                owner: alice
                zones:
                  Notes:
                    records:
                      big: { type: Note, fields: { body: "\(text)" } }
                """, file: "limits.yaml")
        #expect(errors.count == 2, "\(errors)")
        #expect(
            errors.contains {
                $0.location?.line == 3 && $0.message.contains("an email address is at most 254 characters")
            })
        #expect(
            errors.contains {
                $0.location?.line == 8 && $0.message.contains("record `big` is 1.0 MB, over CloudKit's limit of 1 MB")
            })
    }
}
