import Foundation
import ShareKit

/// A cursor over the bytes of a JSON document, reading RFC 8259's grammar; anything else throws.
struct JSONBytes {
    private let bytes: UnsafeBufferPointer<UInt8>
    private(set) var offset = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    typealias Unreadable = WireRecordReader.Unreadable

    var atEnd: Bool { offset == bytes.count }

    mutating func skipSpace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    /// The next byte after white space, not consumed.
    private mutating func peek() throws -> UInt8 {
        skipSpace()
        guard offset < bytes.count else { throw Unreadable() }
        return bytes[offset]
    }

    private mutating func expect(_ byte: UInt8) throws {
        guard try peek() == byte else { throw Unreadable() }
        offset += 1
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw Unreadable() }
        for index in 0..<count where bytes[offset + index] != word.utf8Start[index] { throw Unreadable() }
        offset += count
    }

    /// Consumes `null` when it comes next.
    mutating func isNull() throws -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// Each member of an object, its key given, the reader at its value.
    mutating func object(_ member: (inout JSONBytes, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
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
            default: throw Unreadable()
            }
        }
    }

    /// Each element of an array.
    mutating func array<Element>(_ element: (inout JSONBytes) throws -> Element) throws -> [Element] {
        try expect(UInt8(ascii: "["))
        var elements: [Element] = []
        if try peek() == UInt8(ascii: "]") {
            offset += 1
            return elements
        }
        while true {
            elements.append(try element(&self))
            switch try peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "]"):
                offset += 1
                return elements
            default: throw Unreadable()
            }
        }
    }

    mutating func optionalString() throws -> String? {
        try isNull() ? nil : string()
    }

    mutating func optionalBool() throws -> Bool? {
        switch try peek() {
        case UInt8(ascii: "n"):
            try literal("null")
            return nil
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        default: throw Unreadable()
        }
    }

    /// A string; one with escapes, control characters or bytes that are not UTF-8 is left to `JSONDecoder`
    /// but for the common escapes, which are read here.
    mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = offset
        // Whether a byte beyond ASCII came: only then is the text validated as UTF-8. ASCII needs no check, and
        // `String(validating:as:)` cost as much as the rest of reading a record.
        var beyondASCII: UInt8 = 0
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let utf8 = UnsafeBufferPointer(rebasing: bytes[start..<offset])
                let text =
                    beyondASCII & 0x80 == 0
                    ? String(decoding: utf8, as: UTF8.self) : String(validating: utf8, as: UTF8.self)
                offset += 1
                guard let text else { throw Unreadable() }
                return text
            }
            if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
            if byte < 0x20 { throw Unreadable() }
            beyondASCII |= byte
            offset += 1
        }
        throw Unreadable()
    }

    private mutating func escapedString(from start: Int) throws -> String {
        var utf8 = Array(bytes[start..<offset])
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: utf8, as: UTF8.self) else { throw Unreadable() }
                return text
            case UInt8(ascii: "\\"):
                guard offset < bytes.count else { throw Unreadable() }
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
                        guard (0xDC00..<0xE000).contains(low) else { throw Unreadable() }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw Unreadable() }
                    utf8.append(contentsOf: String(Character(unicode)).utf8)
                default: throw Unreadable()
                }
            default:
                if byte < 0x20 { throw Unreadable() }
                utf8.append(byte)
            }
        }
        throw Unreadable()
    }

    private mutating func hex4() throws -> UInt32 {
        guard offset + 4 <= bytes.count else { throw Unreadable() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            offset += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Unreadable()
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// The bytes of a JSON number, checked against its grammar, and whether it is a whole number as written
    /// (no fraction, no exponent).
    private mutating func number() throws -> (text: String, whole: Bool) {
        _ = try peek()
        let start = offset
        func digits() -> Int {
            let first = offset
            while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
            return offset - first
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        let integerStart = offset
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
            throw Unreadable()
        }
        var whole = true
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { throw Unreadable() }
            whole = false
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                offset += 1
            }
            guard digits() > 0 else { throw Unreadable() }
            whole = false
        }
        return (String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self), whole)
    }

    /// A whole number that fits in 64 bits, written without fraction or exponent.
    mutating func integer() throws -> Int64 {
        let (text, whole) = try number()
        guard whole, let value = Int64(text) else { throw Unreadable() }
        return value
    }

    /// A finite number.
    mutating func double() throws -> Double {
        let (text, _) = try number()
        guard let value = Double(text), value.isFinite else { throw Unreadable() }
        return value
    }

    /// Passes over one value of any kind, checking only that its brackets and strings are well formed.
    mutating func skipValue() throws {
        switch try peek() {
        case UInt8(ascii: "{"): try object { reader, _ in try reader.skipValue() }
        case UInt8(ascii: "["): _ = try array { reader in try reader.skipValue() }
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: _ = try number()
        }
    }
}
