import Crypto
import Foundation
import JSONText
import ShareKit

/// The lines of a saved plan, from chunks of its bytes, each hashed as it is read: no more than a chunk and a
/// line of the file is in memory at once.
struct SavedPlanLineReader {
    private let next: () throws -> Data?
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    private var hasher = SHA256()
    private var authenticator: HMAC<SHA256>?
    /// The number of the line last read, from 1.
    private(set) var number = 0

    init(next: @escaping () throws -> Data?, key: SavedPlanKey? = nil) {
        self.next = next
        authenticator = key.map { HMAC<SHA256>(key: $0.key) }
    }

    /// The SHA-256 of the lines hashed so far, each with its newline.
    var digest: SHA256.Digest { hasher.finalize() }

    /// The HMAC-SHA256 of the lines hashed so far with the key, when there is one.
    var signature: HashedAuthenticationCode<SHA256>? { authenticator?.finalize() }

    mutating func hash(_ line: [UInt8]) {
        hasher.update(data: line)
        hasher.update(data: [UInt8(ascii: "\n")])
        authenticator?.update(data: line)
        authenticator?.update(data: [UInt8(ascii: "\n")])
    }

    /// The next line without its newline, hashed unless told; nil at the end.
    mutating func next(hashed: Bool = true) throws -> [UInt8]? {
        guard let range = try nextRange() else { return nil }
        let line = Array(buffer[range])
        if hashed { hash(line) }
        return line
    }

    /// Reads the next line with `body`, which must read the whole of it.
    /// - Throws: `SavedPlan.Refusal` when there is no next line, or it is not what `body` reads.
    mutating func read<Value>(hashed: Bool = true, _ body: (inout JSONCursor) throws -> Value) throws -> Value {
        guard let range = try nextRange() else {
            throw SavedPlan.Refusal(reason: "it ends at line \(number), before its digest: the file is not whole")
        }
        let number = self.number
        if hashed {
            var hasher = self.hasher
            var authenticator = self.authenticator
            buffer.withUnsafeBytes {
                let line = UnsafeRawBufferPointer(rebasing: $0[range])
                hasher.update(bufferPointer: line)
                authenticator?.update(data: line)
            }
            hasher.update(data: [UInt8(ascii: "\n")])
            authenticator?.update(data: [UInt8(ascii: "\n")])
            self.hasher = hasher
            self.authenticator = authenticator
        }
        return try buffer.withUnsafeBufferPointer { bytes in
            let line = UnsafeBufferPointer(rebasing: bytes[range])
            var input = JSONCursor(line, firstLine: number)
            do {
                let value = try body(&input)
                input.skipSpace()
                guard input.atEnd else { throw input.fault("expected the end of the line after its value") }
                return value
            } catch let error as JSONReadError {
                throw SavedPlan.Refusal.damaged(error)
            } catch let fault as SavedPlanFault {
                throw SavedPlan.Refusal.damaged(input.fault(fault.fault))
            } catch {
                throw SavedPlan.Refusal.damaged(input.fault(Self.fault(of: error)))
            }
        }
    }

    /// What is wrong in a line, from the error Foundation's decoder threw reading a part of it.
    static func fault(of error: any Error) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.isEmpty
                ? "the line"
                : "`" + keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".") + "`"
        }
        switch error {
        case let error as JSONReadError:
            return error.fault
        case DecodingError.keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])) is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "\(path(context.codingPath)) is not what it should be: \(context.debugDescription)"
        case DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty:
            return "it is not JSON a saved plan can hold" + (context.underlyingError.map { " (\($0))" } ?? "")
        case DecodingError.dataCorrupted(let context):
            return "\(path(context.codingPath)) is not what it should be: \(context.debugDescription)"
        default:
            return "it is not the JSON a saved plan's line holds"
        }
    }

    private mutating func nextRange() throws -> Range<Int>? {
        while true {
            let start = self.start
            let found: Int? = buffer.withUnsafeBytes { bytes in
                guard start < bytes.count, let base = bytes.baseAddress,
                    let newline = memchr(base + start, 0x0A, bytes.count - start)
                else { return nil }
                return base.distance(to: UnsafeRawPointer(newline))
            }
            if let newline = found {
                self.start = newline + 1
                number += 1
                return start..<newline
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                self.start = buffer.count
                number += 1
                return start..<buffer.count
            }
            // What is left of the last chunk is a part of a line: only that is moved.
            buffer.removeFirst(start)
            self.start = 0
            guard let chunk = try next(), !chunk.isEmpty else {
                atEnd = true
                continue
            }
            buffer.append(contentsOf: chunk)
        }
    }
}
