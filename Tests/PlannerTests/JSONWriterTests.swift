import Foundation
import Testing

@testable import PlanModel
@testable import Planner

/// The plan's JSON is written piece by piece rather than through `JSONEncoder`, so that a plan of 100,000
/// records is never held whole as a document; these tests hold the writer to `JSONEncoder`'s exact bytes.
@Suite("JSON writer")
struct JSONWriterTests {
    /// `JSONValue` encoded through Foundation, for comparison.
    struct ThroughFoundation: Encodable {
        let value: JSONValue

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch value {
            case .null: try container.encodeNil()
            case .bool(let b): try container.encode(b)
            case .integer(let i): try container.encode(i)
            case .number(let d): try container.encode(d)
            case .string(let s): try container.encode(s)
            case .array(let items): try container.encode(items.map(ThroughFoundation.init))
            case .lazyArray(let count, let element):
                try container.encode((0..<count).map { ThroughFoundation(value: element($0)) })
            case .object(let members): try container.encode(members.mapValues(ThroughFoundation.init))
            }
        }
    }

    static func foundation(_ value: JSONValue) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(ThroughFoundation(value: value)), as: UTF8.self)
    }

    static func written(_ value: JSONValue) -> String {
        var text = ""
        value.write(to: &text, indent: 0)
        return text
    }

    @Test("keys, nesting, empty containers and numbers come out as JSONEncoder writes them")
    func sameLayoutAsJSONEncoder() throws {
        // Doubles that are not whole: a whole one is written `3.0` (`JSONNumber`), where JSONEncoder writes `3`.
        let doubles: [Double] = [1.5, -2.25, 0.1, 1e20, 1.0e-7, 123456789.125, .greatestFiniteMagnitude]
        let document: JSONValue = .object([
            "b": .integer(2), "B": .integer(-3), "a10": .bool(true), "a9": .bool(false), "_under": .null,
            "Zed": .string("z"), "élan": .string("ü"), "item2": .array([]), "item10": .object([:]),
            "doubles": .array(doubles.map(JSONValue.number)),
            "nested": .object(["list": .array([.object(["k": .array([.integer(1), .string("two")])])])]),
            "lazy": .lazyArray(count: 3) { .integer(Int64($0)) },
            "emptyLazy": .lazyArray(count: 0) { _ in .null },
        ])
        #expect(Self.written(document) == (try Self.foundation(document)))
    }

    @Test("a whole double keeps its .0, and NaN and the infinities are strings, as every writer writes them")
    func doubles() {
        #expect(
            Self.written(.array([.number(3), .number(-0.0), .number(.nan), .number(-.infinity)]))
                == "[\n  3.0,\n  -0.0,\n  \"NaN\",\n  \"-Infinity\"\n]")
    }

    @Test(
        "strings escape quotes, backslashes and control characters as JSONEncoder does, and keep slashes and non-ASCII")
    func sameStringEscapes() throws {
        var controls = ""
        for value in 0..<0x20 { controls.unicodeScalars.append(Unicode.Scalar(UInt8(value))) }
        let strings = [
            "plain", "say \"hi\"", "back\\slash", "a/b https://example.com/x", controls, "del \u{7F}",
            "line\u{2028}sep",
            "emoji 🧪 and ñ", "",
        ]
        let document: JSONValue = .array(
            strings.map(JSONValue.string) + [
                .object(Dictionary(uniqueKeysWithValues: strings.map { ($0, .integer(1)) }))
            ])
        #expect(Self.written(document) == (try Self.foundation(document)))
    }
}
