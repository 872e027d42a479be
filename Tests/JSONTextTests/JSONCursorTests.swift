import Foundation
import JSONText
import ShareKit
import Testing

/// The one JSON cursor: RFC 8259's grammar, and where a text breaks it, the line, column and what was
/// expected.
@Suite("JSON cursor")
struct JSONCursorTests {
    /// The value of `text` skipped whole, or the error that stopped it.
    static func skip(_ text: String) -> JSONReadError? {
        Array(text.utf8).withUnsafeBufferPointer { bytes in
            var cursor = JSONCursor(bytes)
            do {
                try cursor.skipValue()
                cursor.skipSpace()
                guard cursor.atEnd else { return cursor.fault("expected the end") }
                return nil
            } catch {
                return error as? JSONReadError
            }
        }
    }

    @Test("numbers outside RFC 8259's grammar are refused where they break it, with what was expected")
    func numberGrammar() {
        let refused: [(text: String, column: Int, fault: String)] = [
            ("01", 1, "expected a number without a leading zero (`0`, `0.5`, `10`, not `01`)"),
            ("-01", 2, "expected a number without a leading zero (`0`, `0.5`, `10`, not `01`)"),
            ("1.", 3, "expected a digit after `.`"),
            ("1.e5", 3, "expected a digit after `.`"),
            ("-", 2, "expected a digit after `-`"),
            ("-x", 2, "expected a digit after `-`"),
            ("1e", 3, "expected a digit in the exponent"),
            ("1e+", 4, "expected a digit in the exponent"),
            ("+1", 1, "expected a value"),
            (".5", 1, "expected a value"),
        ]
        for (text, column, fault) in refused {
            #expect(
                Self.skip(text) == JSONReadError(line: 1, column: column, offset: column - 1, fault: fault), "\(text)")
        }
        for text in ["0", "-0", "10", "0.5", "-0.5e-3", "1E+2", "12345678901234567890123"] {
            #expect(Self.skip(text) == nil, "\(text)")
        }
    }
}

extension JSONCursorTests {
    @Test("an error names the line and the column in characters, counted from 1, and what was expected there")
    func place() {
        // Line 3's `é` is two bytes and one column.
        let text = "{\n  \"a\": [1, 2],\n  \"é\": tru\n}"
        #expect(Self.skip(text) == JSONReadError(line: 3, column: 8, offset: 25, fault: "expected `true`"))
        #expect(Self.skip(text).map(String.init(describing:)) == "line 3, column 8: expected `true`")
        #expect(Self.skip("[1 2]")?.description == "line 1, column 4: expected `,` or `]`")
        #expect(Self.skip("{\"a\" 1}")?.description == "line 1, column 6: expected `:`")
        #expect(Self.skip("{1:2}")?.description == "line 1, column 2: expected a key in quotes")
        #expect(
            Self.skip("\"a\u{1}\"")?.fault.hasPrefix("expected a control character in a string to be escaped") == true)
        #expect(Self.skip("\"\\q\"")?.description.hasPrefix("line 1, column 3: expected an escape") == true)
        #expect(Self.skip("[1,")?.description == "line 1, column 4: expected more, not the end of the text")
        #expect(
            Self.skip(String(repeating: "[", count: 65))?.description
                == "line 1, column 65: its objects and arrays nest deeper than 64 levels")
        #expect(Self.skip(String(repeating: "[", count: 64) + String(repeating: "]", count: 64)) == nil)
    }

    @Test("a text that is one line of a file gives that line's number")
    func firstLine() {
        let error = Array("{\"n\": 1.}".utf8).withUnsafeBufferPointer { bytes -> JSONReadError? in
            var cursor = JSONCursor(bytes, firstLine: 7)
            do {
                try cursor.object { cursor, _ in _ = try cursor.double() }
                return nil
            } catch {
                return error as? JSONReadError
            }
        }
        #expect(error?.description == "line 7, column 9: expected a digit after `.`")
    }

    @Test("integers and doubles read as written; a fraction is not an integer and NaN is not a number")
    func numbers() throws {
        func read<T>(_ text: String, _ body: (inout JSONCursor) throws -> T) throws -> T {
            try Array(text.utf8).withUnsafeBufferPointer { bytes in
                var cursor = JSONCursor(bytes)
                return try body(&cursor)
            }
        }
        #expect(try read("-9223372036854775808") { try $0.integer() } == .min)
        #expect(try read(" 0.1") { try $0.double() } == 0.1)
        #expect(try read("5e-324") { try $0.double() } == .leastNonzeroMagnitude)
        #expect(throws: JSONReadError.self) { try read("1.5") { try $0.integer() } }
        #expect(throws: JSONReadError.self) { try read("9223372036854775808") { try $0.integer() } }
        #expect(throws: JSONReadError.self) { try read("1e999") { try $0.double() } }
        #expect(throws: JSONReadError.self) { try read("NaN") { try $0.double() } }
    }

    // MARK: - Randomized, against Foundation

    /// The same seed, the same texts.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let alphabet = Array("abZ09 _-/.\"\\\t\n\u{0}\u{1F}\u{7F}é🐑")

    static func space(_ random: inout Seeded) -> String {
        ["", "", " ", "\n", "\t ", "\r\n"][Int.random(in: 0...5, using: &random)]
    }

    /// A random JSON text, its strings escaped and its doubles written as sharelane's writers write them.
    static func value(_ random: inout Seeded, depth: Int = 0) -> String {
        let kind = Int.random(in: 0...(depth > 5 ? 4 : 6), using: &random)
        switch kind {
        case 0: return ["null", "true", "false"][Int.random(in: 0...2, using: &random)]
        case 1: return String(Int64.random(in: .min ... .max, using: &random))
        case 2:
            let double =
                Double(Int.random(in: -99_999...99_999, using: &random))
                * [1, 0.1, 1e-7, 1e-30, 1e25][Int.random(in: 0...4, using: &random)]
            return JSONNumber.json(double)
        case 3, 4:
            let text = String(
                (0..<Int.random(in: 0...8, using: &random)).map { _ in
                    alphabet[Int.random(in: 0..<alphabet.count, using: &random)]
                })
            return JSONString.quoted(text)
        case 5:
            let elements = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                space(&random) + value(&random, depth: depth + 1) + space(&random)
            }
            return "[" + elements.joined(separator: ",") + "]"
        default:
            let members = (0..<Int.random(in: 0...4, using: &random)).map { index in
                space(&random) + JSONString.quoted("k\(index)") + space(&random) + ":" + space(&random)
                    + value(&random, depth: depth + 1) + space(&random)
            }
            return "{" + members.joined(separator: ",") + "}"
        }
    }

    /// `text` with one byte changed to a mark of JSON's, dropped or doubled.
    static func damaged(_ text: String, _ random: inout Seeded) -> [UInt8] {
        var bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return bytes }
        let at = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0...2, using: &random) {
        case 0:
            let marks = Array("{}[]\",:0-.eE+\\ ntfu1".utf8)
            bytes[at] = marks[Int.random(in: 0..<marks.count, using: &random)]
        case 1: bytes.remove(at: at)
        default: bytes.insert(bytes[at], at: at)
        }
        return bytes
    }

    static func cursorAccepts(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var cursor = JSONCursor(buffer)
            guard (try? cursor.skipValue()) != nil else { return false }
            cursor.skipSpace()
            return cursor.atEnd
        }
    }

    static func foundationAccepts(_ bytes: [UInt8]) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil
    }

    @Test("random texts, whole and then damaged at random, are accepted and refused as Foundation's parser does")
    func randomTexts() {
        var random = Seeded(state: 20_261_202)
        var refused = 0
        for _ in 0..<3000 {
            let text = Self.value(&random)
            #expect(Self.cursorAccepts(Array(text.utf8)), "\(text)")
            let damaged = Self.damaged(text, &random)
            let accepts = Self.cursorAccepts(damaged)
            if !accepts { refused += 1 }
            // Foundation's parser takes a comma before `}` or `]`, which RFC 8259 does not; the cursor follows
            // the RFC (and the wire reader leaves such a body to Foundation).
            if !accepts, String(decoding: damaged, as: UTF8.self).contains(/,\s*[}\]]/) { continue }
            #expect(
                accepts == Self.foundationAccepts(damaged),
                "\(String(decoding: damaged, as: UTF8.self)): the cursor \(accepts ? "accepts" : "refuses") it")
        }
        // The damage made most texts refused: the comparison is not only of good texts.
        #expect(refused > 1000)
    }
}
