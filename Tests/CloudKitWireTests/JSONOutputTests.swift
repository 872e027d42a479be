import Foundation
import Testing

@testable import CloudKitWire

/// The buffer bodies are written into: what goes in comes out, in order, however often it grows.
@Suite("JSON output buffer")
struct JSONOutputTests {
    @Test("bytes, strings, data and buffers come out in order across many growths")
    func appendsInOrder() {
        var output = JSONOutput(capacity: 0)
        var expected: [UInt8] = []
        for round in 0..<500 {
            let text = "round \(round) ✓ \"quoted\""
            output.append(UInt8(ascii: "["))
            output.append(contentsOf: text.utf8)
            output.append(contentsOf: Data([0, 255, UInt8(round % 256)]))
            output.append(contentsOf: [UInt8](repeating: 7, count: round % 70))
            // A sequence with no contiguous storage goes byte by byte.
            output.append(contentsOf: (0..<3).lazy.map { UInt8($0) })
            expected.append(UInt8(ascii: "["))
            expected += Array(text.utf8)
            expected += [0, 255, UInt8(round % 256)]
            expected += [UInt8](repeating: 7, count: round % 70)
            expected += [0, 1, 2]
        }
        #expect(output.count == expected.count)
        #expect(output.data == Data(expected))
        #expect(output.withBytes { Array($0) } == expected)
    }

    @Test("taking back what was written leaves what came before, and writing goes on from there")
    func truncates() {
        var output = JSONOutput(capacity: 4)
        output.append(contentsOf: "{\"a\":1".utf8)
        let start = output.count
        output.append(contentsOf: ",\"b\":[not plain".utf8)
        output.truncate(to: start)
        output.append(UInt8(ascii: "}"))
        #expect(String(decoding: output.data, as: UTF8.self) == "{\"a\":1}")
    }

    @Test("room reserved ahead holds what is then written")
    func reserves() {
        var output = JSONOutput(capacity: 1)
        output.reserveCapacity(10_000)
        output.append(contentsOf: [UInt8](repeating: 1, count: 10_000))
        output.append(2)
        #expect(output.count == 10_001)
        #expect(output.withBytes { $0.last } == 2)
    }
}
