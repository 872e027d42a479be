import ShareKit

/// Renders a plan for a pull-request comment: a heading, the summary line, a warning when the plan destroys
/// anything, the changes in a collapsed `<details>` block with a `diff` fence, and the notes.
///
/// In the fence, additions are `+` lines, deletions `-` lines, and updates `!` lines (GitHub colours `!`
/// lines apart), with each changed attribute as a `-` line before and a `+` line after.
public struct MarkdownPlanRenderer: Sendable {
    public init() {}

    public func render(_ plan: Plan) -> String {
        var lines: [String] = ["#### sharelane plan: `\(plan.recipeName)`", "", "**\(plan.summary.line)**", ""]
        if plan.changes.isEmpty {
            lines.append("No changes: the store matches the recipe.")
            lines.append("")
        } else {
            let destroyed = plan.changes.filter { $0.action == .delete }
            if !destroyed.isEmpty {
                let noun = destroyed.count == 1 ? "thing" : "things"
                let named = destroyed.prefix(10).map { "`\($0.address)`" }.joined(separator: ", ")
                let more = destroyed.count > 10 ? ", and \(destroyed.count - 10) more" : ""
                lines.append("> [!WARNING]")
                lines.append("> This plan destroys \(destroyed.count) \(noun): \(named)\(more).")
                lines.append("")
            }
            var body: [String] = []
            for change in plan.changes {
                switch change.action {
                case .create:
                    body.append("+ \(change.address)")
                    body += TextPlanRenderer.attributeLines(change).map { "+     \($0)" }
                case .delete:
                    body.append("- \(change.address)")
                    body += TextPlanRenderer.attributeLines(change).map { "-     \($0)" }
                case .update:
                    body.append("! \(change.address)")
                    for attribute in change.attributes {
                        if let before = attribute.before {
                            body.append("-     \(attribute.name): \(before.displayString)")
                        }
                        if let after = attribute.after {
                            body.append("+     \(attribute.name): \(after.displayString)")
                        }
                    }
                }
            }
            // A value holding a fence must not close ours.
            var fence = "```"
            while body.contains(where: { $0.contains(fence) }) { fence += "`" }
            let count = plan.changes.count
            lines.append("<details><summary>Show \(count) \(count == 1 ? "change" : "changes")</summary>")
            lines.append("")
            lines.append(fence + "diff")
            lines += body
            lines.append(fence)
            lines.append("")
            lines.append("</details>")
            lines.append("")
        }
        if !plan.notes.isEmpty || !plan.waiting.isEmpty {
            lines += (plan.notes + plan.waiting).map { "- \($0)" }
            lines.append("")
        }
        // Each entry is one line: names and notes come from the store, so their control characters are
        // escaped (values were escaped when rendered).
        return lines.map { DisplayText.escaped($0) }.joined(separator: "\n")
    }
}
