import Foundation
import Testing

@testable import Recipe

/// A recipe of many zones is decoded in parts, on several cores: what it makes and finds is exactly what one
/// decoder reading it whole makes and finds.
@Suite("Zones decoded in parts")
struct ZonePartsTests {
    /// Forty zones of every kind: shares, nested and explicit parents, references within and across zones,
    /// share URLs, generated and repeated records, and mistakes in some zones (each reported where it is).
    static let yaml: String = {
        var text = """
            sharelane: 1
            name: parts
            seed: 7
            users:
              alice: { email: alice@example.com }
              bob: { email: bob@example.com }
              carol: { email: not-an-email }
            owner: alice
            zones:

            """
        for zone in 0..<40 {
            text += "  Z\(zone):\n"
            if zone % 3 == 0 {
                text += "    share: { title: \"Zone \(zone)\", participants: { bob: read-write, carol: read-only } }\n"
            }
            text += "    records:\n"
            text += "      root-\(zone):\n"
            text += "        type: List\n"
            text += "        fields: { title: \"{{fake.sentence}}\", link: !share-url Z\((zone + 3) % 40) }\n"
            text += "        children:\n"
            text += "          child-\(zone): { type: Item, fields: { up: !ref root-\(zone) } }\n"
            text +=
                "      \"item-{{i}}\": { repeat: 3, type: Item, fields: { n: \"{{i}}\", who: \"{{fake.name}}\" } }\n"
            text += "      loose-\(zone): { type: Item, parent: root-\(zone) }\n"
            if zone % 5 == 1 {
                // Found by the validator: a name generated twice, and a parent cycle.
                text += "      \"dup-{{i}}\": { repeat: 2, type: Item }\n"
                text += "      dup-1: { type: Item }\n"
                text += "      ring-a-\(zone): { type: Item, parent: ring-b-\(zone) }\n"
                text += "      ring-b-\(zone): { type: Item, parent: ring-a-\(zone) }\n"
            }
            if zone % 7 == 2 {
                text += "      broken-\(zone): { type: \"not a type\", colour: red }\n"
                text += "      \"bad-{{i}}\": { repeat: 2, type: Item }\n"
            }
        }
        text += "lanes:\n  check:\n    steps:\n      - apply\n"
        return text
    }()

    /// The recipe and everything the decoder found, decoded with zones in parts or whole.
    /// In parts: three, whatever the machine's cores (the zones do not divide evenly).
    static func decode(inParts: Bool, recordLimit: Int = RecipeDecoder.maxRecords) throws -> (
        recipe: Recipe?, errors: [RecipeError], references: [PendingReference], shareURLs: [PendingShareURL],
        parents: [String: String]
    ) {
        let tree = try YAMLReader(displayPath: "parts.yaml").parse(text: yaml)
        let decoder = RecipeDecoder(rootDirectory: ".")
        decoder.recordLimit = recordLimit
        if inParts { decoder.cores = 3 } else { decoder.zonesPerPart = Int.max }
        let recipe = decoder.decode(tree, file: "parts.yaml", variables: [:])
        return (
            recipe, decoder.errors, decoder.references, decoder.shareURLs,
            decoder.parentLocations.mapValues(\.description)
        )
    }

    @Test("the same recipe, errors, references, share URLs and parents' places, in the same order")
    func partsAgreeWithOneDecoder() throws {
        let whole = try Self.decode(inParts: false)
        let parts = try Self.decode(inParts: true)
        let recipe = try #require(parts.recipe)
        #expect(recipe.zones.count == 40)
        #expect(recipe.zones.map(\.name) == (0..<40).map { "Z\($0)" })
        #expect(recipe == whole.recipe)
        #expect(!parts.errors.isEmpty)
        #expect(parts.errors == whole.errors)
        #expect(parts.references.count == 40)
        #expect(parts.references == whole.references)
        #expect(parts.shareURLs.count == 40)
        #expect(parts.shareURLs == whole.shareURLs)
        #expect(parts.parents.count == 56)
        #expect(parts.parents == whole.parents)
    }

    @Test("each zone's records are checked, on every core, and each mistake is reported in its zone")
    func validatedInParts() throws {
        let errors = loadErrors(yaml: Self.yaml, file: "parts.yaml")
        let twice = errors.filter { $0.message.contains("`dup-1` is declared twice") }
        let zonesWithMistakes = (0..<40).filter { $0 % 5 == 1 }
        #expect(twice.count == zonesWithMistakes.count)
        for (error, zone) in zip(twice, zonesWithMistakes) {
            #expect(error.message.hasPrefix("record `dup-1` is declared twice in zone `Z\(zone)`"))
        }
        let cycles = errors.filter { $0.message.contains("parent cycle") }
        #expect(cycles.count == 2 * zonesWithMistakes.count)
        #expect(
            Set(cycles.map { $0.message.split(separator: "`")[1] })
                == Set(zonesWithMistakes.flatMap { ["ring-a-\($0)", "ring-b-\($0)"] }))
        // Reported in the order of the file.
        #expect(errors.compactMap(\.location?.line) == errors.compactMap(\.location?.line).sorted())
    }

    @Test("over the record limit, the limit is reported where one decoder reports it")
    func recordLimitAsOneDecoder() throws {
        let whole = try Self.decode(inParts: false, recordLimit: 100)
        let parts = try Self.decode(inParts: true, recordLimit: 100)
        let limit = parts.errors.filter { $0.message.contains("more than 100 records") }
        #expect(limit.count == 1)
        #expect(parts.errors == whole.errors)
        #expect(parts.recipe == whole.recipe)
    }
}
