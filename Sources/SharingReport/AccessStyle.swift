/// How the text rendering paints a cell once it is padded: plain, or as the caller chooses (the command line
/// paints with a terminal library). A value, as the plan's `TextStyle` is, so the reports know no terminal.
public struct AccessStyle: Sendable {
    /// Paints a padded cell's text by its cell.
    public var cell: @Sendable (String, AccessCell) -> String
    /// Paints a heading (the share labels).
    public var heading: @Sendable (String) -> String

    public init(
        cell: @escaping @Sendable (String, AccessCell) -> String, heading: @escaping @Sendable (String) -> String
    ) {
        self.cell = cell
        self.heading = heading
    }

    /// No marks: text for files, pipes and tests.
    public static let plain = AccessStyle(cell: { text, _ in text }, heading: { $0 })
}
