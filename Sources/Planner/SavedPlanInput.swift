import Foundation
import ShareKit

/// A cursor over one line of a saved plan, reading RFC 8259's JSON by hand.
///
/// Foundation's decoder read the changes of 20,000 records at well under a megabyte a second on the 2-core
/// machine (its keyed containers look up generic metadata for every value), slower than planning them
/// again; the lines of a saved plan are few shapes, read here directly into the plan's types.
struct SavedPlanInput {
    private let bytes: UnsafeBufferPointer<UInt8>
    /// Where the cursor is; set back to read a value again once what it is is known.
    var offset: Int
    /// How many objects and arrays the cursor is in.
    private var depth = 0

    /// The deepest a line's objects and arrays nest. A plan's lines nest fewer than 10 deep (a subscription's
    /// filter on a list of references is 8); a file edited to nest 300,000 arrays ran the reader out of stack.
    static let maximumDepth = 64

    /// Why a line is not read, and where in it.
    struct Unreadable: Error {
        var fault: String
        /// The byte of the line where it was found, from 0; nil when not known.
        var offset: Int?

        init(_ fault: String = "it is not the JSON a saved plan's line holds", at offset: Int? = nil) {
            self.fault = fault
            self.offset = offset
        }
    }

    init(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var atEnd: Bool {
        mutating get {
            skipSpace()
            return offset == bytes.count
        }
    }

    /// The bytes from `start` to the cursor, for the parts of a line that Foundation's decoder reads.
    func data(from start: Int) -> Data {
        Data(UnsafeBufferPointer(rebasing: bytes[start..<offset]))
    }

    mutating func skipSpace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    /// The next byte after white space, not consumed.
    mutating func peek() throws -> UInt8 {
        skipSpace()
        guard offset < bytes.count else { throw Unreadable("it ends in the middle of a value", at: offset) }
        return bytes[offset]
    }

    mutating func expect(_ byte: UInt8) throws {
        guard try peek() == byte else {
            throw Unreadable("`\(Character(Unicode.Scalar(byte)))` was expected", at: offset)
        }
        offset += 1
    }

    /// Goes one object or array deeper.
    /// - Throws: `Unreadable` past `maximumDepth`.
    private mutating func enter() throws {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw Unreadable("its objects and arrays nest deeper than \(Self.maximumDepth) levels", at: offset)
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw Unreadable(at: offset) }
        for index in 0..<count where bytes[offset + index] != word.utf8Start[index] { throw Unreadable(at: offset) }
        offset += count
    }

    /// Consumes `null` when it comes next.
    mutating func isNull() throws -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    mutating func bool() throws -> Bool {
        switch try peek() {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        default: throw Unreadable(at: offset)
        }
    }

    /// Each member of an object, its key given, the cursor at its value.
    mutating func object(_ member: (inout SavedPlanInput, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        try enter()
        defer { depth -= 1 }
        if try peek() == UInt8(ascii: "}") {
            offset += 1
            return
        }
        while true {
            let key = try string()
            try expect(UInt8(ascii: ":"))
            try member(&self, key)
            switch try peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "}"):
                offset += 1
                return
            default: throw Unreadable(at: offset)
            }
        }
    }

    /// Each element of an array.
    mutating func array(_ element: (inout SavedPlanInput) throws -> Void) throws {
        try expect(UInt8(ascii: "["))
        try enter()
        defer { depth -= 1 }
        if try peek() == UInt8(ascii: "]") {
            offset += 1
            return
        }
        while true {
            try element(&self)
            switch try peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "]"):
                offset += 1
                return
            default: throw Unreadable(at: offset)
            }
        }
    }

    mutating func strings() throws -> [String] {
        var texts: [String] = []
        try array { texts.append(try $0.string()) }
        return texts
    }

    mutating func stringMap() throws -> [String: String] {
        var map: [String: String] = [:]
        try object { input, key in map[key] = try input.string() }
        return map
    }

    mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = offset
        while offset < bytes.count {
            switch bytes[offset] {
            case UInt8(ascii: "\""):
                defer { offset += 1 }
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
            case UInt8(ascii: "\\"):
                return try escapedString(from: start)
            case 0..<0x20:
                throw Unreadable(at: offset)
            default:
                offset += 1
            }
        }
        throw Unreadable(at: offset)
    }

    private mutating func escapedString(from start: Int) throws -> String {
        var utf8 = Array(UnsafeBufferPointer(rebasing: bytes[start..<offset]))
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard offset < bytes.count else { throw Unreadable(at: offset) }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        try literal("\\u")
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw Unreadable(at: offset) }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw Unreadable(at: offset) }
                    utf8.append(contentsOf: String(Character(unicode)).utf8)
                default: throw Unreadable(at: offset)
                }
            case 0..<0x20:
                throw Unreadable(at: offset)
            default:
                utf8.append(byte)
            }
        }
        throw Unreadable(at: offset)
    }

    private mutating func hex4() throws -> UInt32 {
        guard offset + 4 <= bytes.count else { throw Unreadable(at: offset) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            offset += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Unreadable(at: offset)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// The text of the number that comes next, and whether it is an integer (no fraction, no exponent).
    private mutating func number() throws -> (text: Substring, whole: Bool) {
        skipSpace()
        let start = offset
        var whole = true
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        while offset < bytes.count, Self.isNumberByte(bytes[offset]) {
            if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { whole = false }
            offset += 1
        }
        guard offset > start else { throw Unreadable("a value was expected", at: offset) }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        return (text[...], whole)
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"),
            UInt8(ascii: "+"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    mutating func integer() throws -> Int64 {
        skipSpace()
        let start = offset
        let (text, whole) = try number()
        guard whole, let value = Int64(text) else {
            throw Unreadable("\(text) is not a whole number of at most 19 digits", at: start)
        }
        return value
    }

    mutating func double() throws -> Double {
        guard let value = Double(try number().text) else { throw Unreadable(at: offset) }
        return value
    }

    /// Passes over the value that comes next, whatever it is, checking that it is JSON: a loop over its
    /// tokens with a stack of the objects and arrays it is in, so that no nesting reaches the call stack.
    /// - Throws: `Unreadable` for what is not JSON, or nests deeper than `maximumDepth` (counting the levels
    ///   the cursor is in already).
    mutating func skipValue() throws {
        // For each object or array open: whether it is an object.
        var open: [Bool] = []
        while true {
            // A value.
            switch try peek() {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = bytes[offset] == UInt8(ascii: "{")
                offset += 1
                if try peek() == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    offset += 1
                } else {
                    open.append(isObject)
                    guard depth + open.count <= Self.maximumDepth else {
                        throw Unreadable(
                            "its objects and arrays nest deeper than \(Self.maximumDepth) levels", at: offset)
                    }
                    if isObject {
                        _ = try string()
                        try expect(UInt8(ascii: ":"))
                    }
                    continue
                }
            case UInt8(ascii: "\""): _ = try string()
            case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try bool()
            case UInt8(ascii: "n"): try literal("null")
            default: _ = try number()
            }
            // What follows a value: the next member or element, or the end of the objects and arrays it closes.
            while let isObject = open.last {
                switch try peek() {
                case UInt8(ascii: ","):
                    offset += 1
                    if isObject {
                        _ = try string()
                        try expect(UInt8(ascii: ":"))
                    }
                case isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"):
                    offset += 1
                    open.removeLast()
                    continue
                default:
                    throw Unreadable("`,` or `\(isObject ? "}" : "]")` was expected", at: offset)
                }
                break
            }
            if open.isEmpty { return }
        }
    }
}
