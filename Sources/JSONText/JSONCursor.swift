import Foundation

/// A cursor over the bytes of JSON text, reading RFC 8259's grammar and nothing else: the one reader of
/// the hand-read wire bodies and the saved plan's lines.
///
/// Foundation's decoder looks up generic metadata for every value; the few shapes sharelane reads often are
/// read through this directly into their types. Whatever breaks the grammar (`01`, `1.`, `-`, `1e`, a raw
/// control character in a string, text that is not UTF-8) throws a `JSONReadError` naming the line, the column
/// and what was expected there.
package struct JSONCursor {
    @usableFromInline let bytes: UnsafeBufferPointer<UInt8>
    /// Where the cursor is, a byte from 0; set back to read a value again once what it is is known.
    package var offset: Int
    /// How many objects and arrays the cursor is in.
    @usableFromInline var depth = 0
    /// The number of the text's first line, for text that is one line of a larger file.
    @usableFromInline let firstLine: Int

    /// The deepest objects and arrays nest: the texts read here nest fewer than 10 deep, and a text edited to
    /// nest 300,000 arrays would otherwise run a reader out of stack.
    package static let maximumDepth = 64

    /// - Parameter firstLine: the line number errors give the text's first line.
    package init(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int = 0, firstLine: Int = 1) {
        self.bytes = bytes
        self.offset = offset
        self.firstLine = firstLine
    }

    /// Whether the cursor is past the last byte (white space is not skipped).
    @inlinable package var atEnd: Bool { offset == bytes.count }

    /// The bytes from `start` to the cursor, for the parts of a text that Foundation's decoder reads.
    package func data(from start: Int) -> Data {
        Data(UnsafeBufferPointer(rebasing: bytes[start..<offset]))
    }

    // MARK: - Faults

    /// The error for what is wrong at `offset` (the cursor's own by default), its line and column found by
    /// counting back: only a text that is refused pays for it.
    package func fault(_ what: String, at offset: Int? = nil) -> JSONReadError {
        let at = min(max(offset ?? self.offset, 0), bytes.count)
        var line = firstLine
        var lineStart = 0
        for index in 0..<at where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        // Characters, not bytes: a byte that continues a UTF-8 sequence is not a column of its own.
        var column = 1
        for index in lineStart..<at where bytes[index] & 0xC0 != 0x80 { column += 1 }
        return JSONReadError(line: line, column: column, offset: at, fault: what)
    }

    @usableFromInline func expected(_ what: String) -> JSONReadError { fault("expected " + what) }

    // MARK: - Marks

    @inlinable package mutating func skipSpace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    /// The next byte after white space, not consumed.
    /// - Throws: `JSONReadError` at the end of the text.
    @inlinable package mutating func peek() throws -> UInt8 {
        skipSpace()
        guard offset < bytes.count else { throw expected("more, not the end of the text") }
        return bytes[offset]
    }

    /// Consumes `byte`, after white space.
    @inlinable package mutating func expect(_ byte: UInt8) throws {
        guard try peek() == byte else { throw expected("`\(Character(Unicode.Scalar(byte)))`") }
        offset += 1
    }

    @inlinable mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count else { throw expected("`\(word)`") }
        for index in 0..<count where bytes[offset + index] != word.utf8Start[index] { throw expected("`\(word)`") }
        offset += count
    }

    /// Goes one object or array deeper.
    /// - Throws: `JSONReadError` past `maximumDepth`.
    @inlinable mutating func enter() throws {
        depth += 1
        guard depth <= Self.maximumDepth else { throw tooDeep() }
    }

    /// At the bracket just read, the one too deep.
    @usableFromInline func tooDeep() -> JSONReadError {
        fault("its objects and arrays nest deeper than \(Self.maximumDepth) levels", at: offset - 1)
    }

    // MARK: - Values

    /// Consumes `null` when it comes next.
    @inlinable package mutating func isNull() throws -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    @inlinable package mutating func bool() throws -> Bool {
        switch try peek() {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        default: throw expected("`true` or `false`")
        }
    }

    @inlinable package mutating func optionalBool() throws -> Bool? {
        try isNull() ? nil : bool()
    }

    @inlinable package mutating func optionalString() throws -> String? {
        try isNull() ? nil : string()
    }

    /// Each member of an object, its key given, the cursor at its value.
    @inlinable package mutating func object(_ member: (inout JSONCursor, String) throws -> Void) throws {
        guard try peek() == UInt8(ascii: "{") else { throw expected("an object") }
        offset += 1
        try enter()
        defer { depth -= 1 }
        if try peek() == UInt8(ascii: "}") {
            offset += 1
            return
        }
        while true {
            guard try peek() == UInt8(ascii: "\"") else { throw expected("a key in quotes") }
            let key = try string()
            try expect(UInt8(ascii: ":"))
            try member(&self, key)
            switch try peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "}"):
                offset += 1
                return
            default: throw expected("`,` or `}`")
            }
        }
    }

    /// Each element of an array, read by `element`.
    @inlinable package mutating func eachElement(_ element: (inout JSONCursor) throws -> Void) throws {
        guard try peek() == UInt8(ascii: "[") else { throw expected("an array") }
        offset += 1
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
            default: throw expected("`,` or `]`")
            }
        }
    }

    /// The elements of an array, each read by `element`.
    @inlinable package mutating func array<Element>(_ element: (inout JSONCursor) throws -> Element) throws
        -> [Element]
    {
        var elements: [Element] = []
        try eachElement { elements.append(try element(&$0)) }
        return elements
    }

    /// A string. Bytes beyond ASCII are checked to be UTF-8 (only then: the check cost as much as the rest of
    /// reading a record).
    @inlinable package mutating func string() throws -> String {
        guard try peek() == UInt8(ascii: "\"") else { throw expected("a string") }
        offset += 1
        let start = offset
        var beyondASCII: UInt8 = 0
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let utf8 = UnsafeBufferPointer(rebasing: bytes[start..<offset])
                guard
                    let text = beyondASCII & 0x80 == 0
                        ? String(decoding: utf8, as: UTF8.self) : String(validating: utf8, as: UTF8.self)
                else { throw fault("expected UTF-8 text in a string", at: start) }
                offset += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
            if byte < 0x20 { throw controlCharacter() }
            beyondASCII |= byte
            offset += 1
        }
        throw expected("`\"` to end the string")
    }

    @usableFromInline func controlCharacter() -> JSONReadError {
        expected("a control character in a string to be escaped (`\\n`, `\\u001f`)")
    }

    @usableFromInline mutating func escapedString(from start: Int) throws -> String {
        var utf8 = Array(UnsafeBufferPointer(rebasing: bytes[start..<offset]))
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    throw fault("expected UTF-8 text in a string", at: start)
                }
                offset += 1
                return text
            case UInt8(ascii: "\\"):
                offset += 1
                guard offset < bytes.count else { throw expected("an escape after `\\`") }
                let escape = bytes[offset]
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    offset += 1
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"),
                            bytes[offset + 1] == UInt8(ascii: "u")
                        else { throw expected("`\\u` and the second half of a surrogate pair") }
                        offset += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else {
                            throw fault(
                                "expected the second half of a surrogate pair (`\\uDC00` to `\\uDFFF`)", at: offset - 4)
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else {
                        throw fault("expected a character, not half of a surrogate pair", at: offset - 4)
                    }
                    utf8.append(contentsOf: String(Character(unicode)).utf8)
                    continue
                default:
                    throw expected(
                        #"an escape: `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t` or `\u` and 4 hex digits"#)
                }
                offset += 1
            default:
                if byte < 0x20 { throw controlCharacter() }
                utf8.append(byte)
                offset += 1
            }
        }
        throw expected("`\"` to end the string")
    }

    /// Four hex digits, the cursor after them.
    @usableFromInline mutating func hex4() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard offset < bytes.count else { throw expected("4 hex digits after `\\u`") }
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw expected("4 hex digits after `\\u`")
            }
            offset += 1
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    // MARK: - Numbers

    /// The text of the number that comes next, checked against RFC 8259's grammar (`-`? then `0` or a digit
    /// 1–9 and more digits, then `.` and digits, then `e` or `E`, a sign and digits), and whether it is a
    /// whole number as written (no fraction, no exponent). A number too large for a Double is refused.
    @inlinable mutating func number() throws -> (text: String, whole: Bool) {
        skipSpace()
        let start = offset
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        let integerStart = offset
        let integerDigits = digits()
        guard integerDigits > 0 else {
            throw offset == start ? expected("a number") : expected("a digit after `-`")
        }
        guard integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
            throw fault("expected a number without a leading zero (`0`, `0.5`, `10`, not `01`)", at: integerStart)
        }
        var whole = true
        var exponent = false
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { throw expected("a digit after `.`") }
            whole = false
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                offset += 1
            }
            guard digits() > 0 else { throw expected("a digit in the exponent") }
            whole = false
            exponent = true
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        // Only an exponent takes a number past what a Double holds (300 digits would, and are not written):
        // such a number is refused, as Foundation's parser refuses it.
        if exponent, Double(text)?.isFinite != true {
            throw fault("expected a number a Double holds, not \(text)", at: start)
        }
        return (text, whole)
    }

    /// Passes over digits, answering how many.
    @inlinable mutating func digits() -> Int {
        let first = offset
        while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
        return offset - first
    }

    /// A whole number that fits in 64 bits, written without fraction or exponent.
    @inlinable package mutating func integer() throws -> Int64 {
        skipSpace()
        let start = offset
        let (text, whole) = try number()
        guard whole, let value = Int64(text) else {
            throw fault("expected a whole number of at most 19 digits, not \(text)", at: start)
        }
        return value
    }

    /// A finite number.
    @inlinable package mutating func double() throws -> Double {
        skipSpace()
        let start = offset
        let (text, _) = try number()
        guard let value = Double(text), value.isFinite else {
            throw fault("expected a number a Double holds, not \(text)", at: start)
        }
        return value
    }

    // MARK: - Any value

    /// Passes over the value that comes next, whatever it is, checking it against the grammar: a loop over
    /// its tokens with a stack of the objects and arrays it is in, so that no nesting reaches the call stack.
    /// - Throws: `JSONReadError` for what is not JSON, or nests deeper than `maximumDepth` (counting the levels
    ///   the cursor is in already).
    package mutating func skipValue() throws {
        // For each object or array open: whether it is an object.
        var open: [Bool] = []
        while true {
            // A value.
            switch try peek() {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = bytes[offset] == UInt8(ascii: "{")
                offset += 1
                guard depth + open.count < Self.maximumDepth else { throw tooDeep() }
                if try peek() == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    offset += 1
                } else {
                    open.append(isObject)
                    if isObject { try key() }
                    continue
                }
            case UInt8(ascii: "\""): _ = try string()
            case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try bool()
            case UInt8(ascii: "n"): try literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try number()
            default: throw expected("a value")
            }
            // What follows a value: the next member or element, or the end of the objects and arrays it closes.
            while let isObject = open.last {
                switch try peek() {
                case UInt8(ascii: ","):
                    offset += 1
                    if isObject { try key() }
                case isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"):
                    offset += 1
                    open.removeLast()
                    continue
                default:
                    throw expected(isObject ? "`,` or `}`" : "`,` or `]`")
                }
                break
            }
            if open.isEmpty { return }
        }
    }

    /// A member's key and its `:`.
    private mutating func key() throws {
        guard try peek() == UInt8(ascii: "\"") else { throw expected("a key in quotes") }
        _ = try string()
        try expect(UInt8(ascii: ":"))
    }
}
