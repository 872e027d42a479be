/// How the text renderer marks the parts of a plan: plain, or painted by whatever the caller chooses (the
/// command line paints with a terminal library). A value, as swift-custom-dump's `DiffFormat` is, so that the
/// planner knows nothing of terminals.
public struct TextStyle: Sendable {
    /// Paints a change's line: an addition, an update or a deletion.
    public var change: @Sendable (String, PlannedChange.Action) -> String
    /// Paints a line about what waits on someone else (a participant who has not accepted yet).
    public var waiting: @Sendable (String) -> String
    /// Paints the summary line.
    public var summary: @Sendable (String) -> String

    public init(
        change: @escaping @Sendable (String, PlannedChange.Action) -> String,
        waiting: @escaping @Sendable (String) -> String, summary: @escaping @Sendable (String) -> String
    ) {
        self.change = change
        self.waiting = waiting
        self.summary = summary
    }

    /// No marks: text for files, pipes and tests.
    public static let plain = TextStyle(change: { text, _ in text }, waiting: { $0 }, summary: { $0 })
}
