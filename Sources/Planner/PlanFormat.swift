/// The formats a plan renders in.
public enum PlanFormat: String, Sendable, Hashable, Codable, CaseIterable {
    /// `+ ~ -` lines with field-level `before → after`; colour on a terminal.
    case text
    /// A pull-request comment: the summary line, a warning when anything is destroyed, and the changes in a
    /// collapsed `<details>` block with a `diff` fence.
    case markdown
    /// Machine-readable: `format_version`, `summary`, `changes[]`.
    case json

    /// Renders `plan` in this format; `colors` applies to `text` only.
    public func render(_ plan: Plan, colors: Bool = false) -> String {
        switch self {
        case .text: TextPlanRenderer(colors: colors).render(plan)
        case .markdown: MarkdownPlanRenderer().render(plan)
        case .json: JSONPlanRenderer().render(plan)
        }
    }
}
