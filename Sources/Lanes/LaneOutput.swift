import Foundation
import ShareKit

/// Where a lane run writes its lines: standard output for the command line, a buffer for tests.
public struct LaneOutput: Sendable {
    private let write: @Sendable (String) -> Void

    /// An output that hands each line (without its newline) to `write`.
    public init(_ write: @escaping @Sendable (String) -> Void) {
        self.write = write
    }

    /// Writes one line (a message may span lines on purpose), control characters escaped: the names and
    /// values in it come from recipes and stores.
    public func line(_ text: String) {
        write(DisplayText.escaped(text, keepingNewlines: true))
    }

    /// Lines are dropped.
    public static let discard = LaneOutput { _ in }

    /// An output that appends to any `TextOutputStream` held in a box, for callers that own one.
    public static func stream<S: TextOutputStream & Sendable>(_ box: StreamBox<S>) -> LaneOutput {
        LaneOutput { text in box.append(text + "\n") }
    }
}
