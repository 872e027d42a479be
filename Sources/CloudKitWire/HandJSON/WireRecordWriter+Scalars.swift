import Foundation
import JSONText
import ShareKit

/// The record writer's scalars and objects: integers, doubles, booleans and strings as `JSONEncoder` writes
/// them, and the object writer that separates members.
extension WireRecordWriter {
    /// Digits written in place, last first, with no `String` made for each (every record has two stamps).
    static func integer(_ value: Int64, into bytes: inout JSONOutput) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// A finite double, as `JSONNumber` writes it (`1.5`, `3.0`, `5e-324`): JSON reads it back exactly.
    static func double(_ value: Double, into bytes: inout JSONOutput) {
        guard let text = JSONNumber.text(value) else { preconditionFailure("JSON has no \(value)") }
        bytes.append(contentsOf: text.utf8)
    }

    static func boolean(_ value: Bool, into bytes: inout JSONOutput) {
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// One JSON object being written: `{`, each present member as `"key":value`, `}`; an absent (nil)
    /// member is left out, as `JSONEncoder` leaves out a nil optional.
    struct ObjectWriter {
        private var first = true

        /// A member whose key is the writer's own (letters only): copied as it is, with no escaping to check
        /// (keys were most of the strings a record's answer wrote).
        mutating func member<Value>(
            _ key: StaticString, _ value: Value?, into bytes: inout JSONOutput,
            _ write: (Value, inout JSONOutput) throws -> Void
        ) rethrows {
            guard let value else { return }
            separate(&bytes)
            bytes.append(UInt8(ascii: "\""))
            key.withUTF8Buffer { bytes.append(contentsOf: $0) }
            bytes.append(UInt8(ascii: "\""))
            bytes.append(UInt8(ascii: ":"))
            try write(value, &bytes)
        }

        /// A member whose key comes from outside (a field's name): escaped as any string.
        mutating func member<Value>(
            named key: String, _ value: Value?, into bytes: inout JSONOutput,
            _ write: (Value, inout JSONOutput) throws -> Void
        ) rethrows {
            guard let value else { return }
            separate(&bytes)
            WireRecordWriter.string(key, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            try write(value, &bytes)
        }

        /// A member whose key is UTF-8 bytes from outside (a stored field's name): escaped as any string.
        mutating func member<Value>(
            utf8Named key: UnsafeRawBufferPointer, _ value: Value, into bytes: inout JSONOutput,
            _ write: (Value, inout JSONOutput) throws -> Void
        ) rethrows {
            separate(&bytes)
            WireRecordWriter.string(utf8: key, into: &bytes)
            bytes.append(UInt8(ascii: ":"))
            try write(value, &bytes)
        }

        /// `{` before the first member, `,` before the others.
        private mutating func separate(_ bytes: inout JSONOutput) {
            bytes.append(UInt8(ascii: first ? "{" : ","))
            first = false
        }

        func end(into bytes: inout JSONOutput) {
            if first { bytes.append(UInt8(ascii: "{")) }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// A JSON string of UTF-8 bytes (a store's own), as `string(_:into:)` writes the `String` they read as:
    /// copied as they are when all are ASCII and none needs an escape.
    static func string(utf8 text: UnsafeRawBufferPointer, into bytes: inout JSONOutput) {
        for byte in text where byte >= 0x80 || JSONString.needsEscape(byte) {
            string(String(decoding: text, as: UTF8.self), into: &bytes)
            return
        }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: text)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A JSON string, escaped as `JSONString` says.
    static func string(_ text: String, into bytes: inout JSONOutput) {
        bytes.append(UInt8(ascii: "\""))
        // Most names and values need no escape: checked and copied in one piece, not byte by byte (the
        // byte-by-byte append was an eighth of the emulator's time under load).
        let copied = text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            for byte in utf8 where JSONString.needsEscape(byte) {
                return false
            }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied == true {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            if JSONString.needsEscape(byte) {
                bytes.append(contentsOf: JSONString.escape(byte))
            } else {
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
