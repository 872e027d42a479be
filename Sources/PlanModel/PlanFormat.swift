/// The formats a plan renders in.
public enum PlanFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// `+ ~ -` lines with field-level `before → after`; colour on a terminal.
    case text
    /// A pull-request comment: the summary line, a warning when anything is destroyed, and the changes in a
    /// collapsed `<details>` block with a `diff` fence.
    case markdown
    /// Machine-readable: `format_version`, `summary`, `changes[]`.
    case json

    /// Renders `plan` in this format; `style` applies to `text` only.
    public func render(_ plan: Plan, style: TextStyle = .plain, expand: Bool = false) -> String {
        var text = ""
        write(plan, style: style, expand: expand, to: &text)
        return text
    }

    /// Writes `plan` in this format to `output` piece by piece: text and JSON never hold the whole rendering
    /// in memory, which for a plan of 100,000 records is tens of megabytes.
    /// - Parameter expand: every generated record on its own lines (text and markdown; JSON always has them).
    public func write<Output: TextOutputStream>(
        _ plan: Plan, style: TextStyle = .plain, expand: Bool = false, to output: inout Output
    ) {
        switch self {
        case .text: TextPlanRenderer(style: style, expand: expand).write(plan, to: &output)
        case .markdown: output.write(MarkdownPlanRenderer(expand: expand).render(plan))
        case .json: JSONPlanRenderer().write(plan, to: &output)
        }
    }
}
