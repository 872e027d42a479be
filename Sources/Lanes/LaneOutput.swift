import Foundation
import ShareKit

/// Where a lane run writes its lines: standard output for the command line, a buffer for tests.
public struct LaneOutput: Sendable {
    private let write: @Sendable (String) -> Void
    /// Whether the lines reach a terminal that shows colour, where a tool's own colours are kept.
    public let showsColour: Bool

    /// An output that hands each line (without its newline) to `write`; `showsColour` when the lines reach a
    /// terminal that shows colour.
    public init(showsColour: Bool = false, _ write: @escaping @Sendable (String) -> Void) {
        self.showsColour = showsColour
        self.write = write
    }

    /// Writes one line (a message may span lines on purpose), control characters escaped: the names and
    /// values in it come from recipes and stores.
    public func line(_ text: String) {
        write(DisplayText.escaped(text, keepingNewlines: true))
    }

    /// Writes a line a tool printed after `indent`, as the tool printed it (see `ToolText`): its tabs and, on
    /// a terminal, its colours; elsewhere without colour codes.
    public func toolLine(_ text: String, indent: String) {
        write(indent + (showsColour ? ToolText.forTerminal(text) : ToolText.plain(text)))
    }

    /// Lines are dropped.
    public static let discard = LaneOutput { _ in }

    /// An output that appends to any `TextOutputStream` held in a box, for callers that own one.
    public static func stream<S: TextOutputStream & Sendable>(_ box: StreamBox<S>) -> LaneOutput {
        LaneOutput { text in box.append(text + "\n") }
    }
}
