import Foundation
import Recipe
import SharelaneTestSupport
import Testing

/// No recipe bytes crash a command: the worked recipes of `Recipes/`, edited at random (bytes replaced,
/// inserted and deleted, with the characters that trip YAML's line and column counting most: tabs, carriage
/// returns, braces, quotes, colons) and cut short, each give a recipe or errors that say where.
@Suite("Fuzzed recipes")
struct FuzzedRecipeTests {
    /// Bytes an edit writes: what YAML's scanner and the mistake wording count lines and columns by.
    static let trouble: [UInt8] = Array("\t\r\n {}[]\"':#-,&*!|>%@`".utf8) + [0xC2, 0x85, 0xE2, 0x80, 0xA8]

    static func edited(_ bytes: [UInt8], random: inout SplitMix) -> [UInt8] {
        var out = bytes
        for _ in 0..<Int(random.next() % 4 + 1) where !out.isEmpty {
            let at = Int(random.next() % UInt64(out.count))
            let byte =
                random.next() % 3 == 0
                ? UInt8(truncatingIfNeeded: random.next()) : trouble[Int(random.next() % UInt64(trouble.count))]
            switch random.next() % 4 {
            case 0: out[at] = byte
            case 1: out.insert(byte, at: at)
            case 2: out.remove(at: at)
            default: out = Array(out.prefix(at))
            }
        }
        return out
    }

    @Test(
        "3,000 random edits and truncations of the worked recipes: each loads or says where it is wrong, none crashes")
    func editedRecipesNeverCrash() throws {
        let root = BuiltProducts.packageRoot
        let recipes = try SharelaneBinary.recipes().map {
            try [UInt8](Data(contentsOf: root.appendingPathComponent($0)))
        }
        var random = SplitMix(seed: 20_261_127)
        var refused = 0
        var unlocated: [String] = []
        for number in 0..<3_000 {
            let source = recipes[number % recipes.count]
            let text = String(decoding: Self.edited(source, random: &random), as: UTF8.self)
            let errors = loadErrors(yaml: text, file: "fuzz.yaml")
            if !errors.isEmpty { refused += 1 }
            for error in errors where !error.description.hasPrefix("fuzz.yaml:") {
                unlocated.append("edit \(number): \(error.description)")
            }
        }
        // The edits must break most recipes, or they test little.
        #expect(refused > 1_500, "only \(refused) of 3,000 edits were refused")
        #expect(unlocated.isEmpty, "\(unlocated.prefix(5).joined(separator: "\n"))")
    }

    @Test("a broken flow mapping, then a line whose indentation holds a carriage return: an error at its line")
    func carriageReturnInIndentation() async throws {
        let text =
            "sharelane: 1\nname: fuzz-b\nusers:\n  owner: { email: own:er@example.com }E  u1: { email: u1@example.com }\n"
            + "owner: owner\nzones:\n  Z:\n    share:\n      participants:\n  re:\n      participants:\n"
            + "        u1: read-write\n    records:\n      \"r-{{i}}\":\n     \r   repeat: 20\n        type: Item\n"
            + "        fields: { title: \"Item {{i}}\", when: \"{{fake {{i}}\",{ when: \"{{fake.date}}\", who: \"{{fake.name}}\","
        let scratch = try TemporaryDirectory("fuzz")
        let file = try scratch.write("crash.yaml", text)
        let result = try await SharelaneBinary.run(["validate", file])
        #expect(result.status == 1, "\(result.output)")
        #expect(result.stderr.contains("crash.yaml:"), "\(result.stderr)")
        #expect(result.stderr.contains("malformed YAML"), "\(result.stderr)")
        #expect(!result.output.contains("Fatal error"), "\(result.output)")
    }
}

/// A seeded generator, the same edits every run.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
