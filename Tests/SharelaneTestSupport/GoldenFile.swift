import CustomDump
import Foundation
import Testing

/// A folder of golden files: rendered text compared with the file as text, with a diff on failure.
///
/// `RECORD_GOLDEN=1` rewrites the file instead and records an issue, so that a recording run is never green
/// (swift-argument-parser's `assertSnapshot` does the same).
public struct GoldenFile: Sendable {
    /// The folder in the source tree that holds the golden files.
    public let directory: URL

    /// The golden files in `Golden/` beside `filePath` (pass `#filePath` of a file of the test target).
    public init(besides filePath: String, folder: String = "Golden") {
        directory = URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent(folder)
    }

    /// The file called `name`.
    public func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// Compares `actual` with the golden file `name`.
    ///
    /// - Throws: when re-recording cannot write the file.
    public func check(_ actual: String, against name: String, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let file = url(name)
        if ProcessInfo.processInfo.environment["RECORD_GOLDEN"] == "1" {
            try actual.write(to: file, atomically: true, encoding: .utf8)
            Issue.record(
                "recorded \(name); run again without RECORD_GOLDEN to check it", sourceLocation: sourceLocation)
            return
        }
        guard let expected = try? String(contentsOf: file, encoding: .utf8) else {
            Issue.record("no golden file \(name); record it with RECORD_GOLDEN=1", sourceLocation: sourceLocation)
            return
        }
        if actual != expected {
            let difference = diff(expected, actual) ?? "(the texts differ in a way the diff does not show)"
            Issue.record(
                "\(name) differs from the golden file (− golden, + actual):\n\(difference)",
                sourceLocation: sourceLocation)
        }
    }
}
