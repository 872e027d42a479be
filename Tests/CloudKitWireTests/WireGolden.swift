import CloudKitWire
import Foundation
import Testing

/// Compares text with a golden file in `Golden/`, as text; `RECORD_GOLDEN=1` rewrites the file instead.
enum GoldenFile {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    static func check(_ text: String, against name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let url = directory.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["RECORD_GOLDEN"] == "1" {
            try text.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
            Issue.record(
                "no golden file \(name); run with RECORD_GOLDEN=1 to record it", sourceLocation: sourceLocation)
            return
        }
        #expect(text == expected, "\(name) differs from the golden file", sourceLocation: sourceLocation)
    }

    /// The JSON the client sends (sorted keys), pretty-printed for review.
    static func json<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try WireCoding.encoder(pretty: true).encode(value), as: UTF8.self) + "\n"
    }
}
