import ShareKit
import SharingReport

/// Renders a plan for a pull-request comment: a heading and the summary line; a warning when the plan
/// destroys anything; when sharing changes, a Mermaid graph of what changes (GitHub and GitLab draw it) and
/// the access cells that change; then the changes in a collapsed `<details>` block with a `diff` fence; and
/// the notes.
///
/// In the fence, additions are `+` lines, deletions `-` lines, and updates `!` lines (GitHub colours `!`
/// lines apart), with each changed attribute as a `-` line before and a `+` line after.
///
/// It always fits one comment: GitHub refuses a comment over 65,536 characters, so past `characterLimit` the
/// diff stops and says how many changes it leaves out and how to see the full plan.
public struct MarkdownPlanRenderer: Sendable {
    /// GitHub's limit for a comment, less room for what a CI step adds around the plan.
    public static let defaultCharacterLimit = 60_000

    public var characterLimit: Int
    /// Every generated record on its own lines; by default the records one `repeat:` made that change
    /// alike are one line (`GeneratedRun`).
    public var expand: Bool

    public init(characterLimit: Int = MarkdownPlanRenderer.defaultCharacterLimit, expand: Bool = false) {
        self.characterLimit = characterLimit
        self.expand = expand
    }

    public func render(_ plan: Plan) -> String {
        // Each entry is one line: names and notes come from the store, so their control characters are
        // escaped (values were escaped when rendered).
        var head: [String] = [
            "#### sharelane plan: `\(plan.recipeName)`"
                + (plan.against.map { " against " + $0.name } ?? " on `\(DisplayText.escaped(plan.worldName))`"), "",
        ]
        if let against = plan.against {
            if let problem = against.problem {
                // Everything shows as new: the comment says so before anyone reads the changes as this
                // pull request's.
                head += [
                    "> [!CAUTION]",
                    "> This plan is against nothing: the base recipe \(against.name) \(problem). Every declared thing is planned as new, so it does not show what this change alone does.",
                    "",
                ]
            } else {
                head += ["Planned against the state \(against.name) declares, not a live store.", ""]
            }
        }
        head += ["**\(plan.summary.line)**", ""]
        if plan.zoneOwners != nil {
            // Each zone is written as its owner: the reviewer sees whose private database each change is in.
            var seen = Set<String>()
            let zones = plan.changes.compactMap { change -> String? in
                guard change.database == .private, change.kind != .subscription, seen.insert(change.zoneName).inserted
                else { return nil }
                return "`\(change.zoneName)` (\(plan.owner(of: change)))"
            }
            if !zones.isEmpty { head += ["Zones by owner: " + zones.joined(separator: ", ") + ".", ""] }
        }
        var tail: [String] = []
        let schemaChanges = plan.schemaChanges
        if !schemaChanges.isEmpty {
            head.append("**\(TextPlanRenderer.schemaLine(schemaChanges))**")
            head.append("")
            head.append("```diff")
            head += schemaChanges.map { $0.description.replacingOccurrences(of: "~ ", with: "! ") }
            head.append("```")
            head.append("")
        }
        if plan.changes.isEmpty {
            if schemaChanges.isEmpty {
                head.append(
                    plan.against == nil
                        ? "No changes: the store matches the recipe."
                        : "No changes: the recipe declares what the base recipe declares.")
                head.append("")
            }
        } else {
            let destroyed = plan.changes.filter { $0.action == .delete }
            if !destroyed.isEmpty {
                let noun = destroyed.count == 1 ? "thing" : "things"
                let named = destroyed.prefix(10).map { "`\($0.address)`" }.joined(separator: ", ")
                let more = destroyed.count > 10 ? ", and \(destroyed.count - 10) more" : ""
                head.append("> [!WARNING]")
                head.append("> This plan destroys \(destroyed.count) \(noun): \(named)\(more).")
                head.append("")
            }
            head += sharingSection(plan)
        }
        let notes = plan.notes + plan.waiting
        if !notes.isEmpty {
            tail += notes.prefix(20).map { "- \($0)" }
            if notes.count > 20 {
                tail.append("- …and \(notes.count - 20) more notes (`sharelane plan` prints them all).")
            }
            tail.append("")
        }
        let headLines = head.map { DisplayText.escaped($0) }
        let tailLines = tail.map { DisplayText.escaped($0) }
        guard !plan.changes.isEmpty else { return (headLines + tailLines).joined(separator: "\n") }
        let budget =
            characterLimit - headLines.reduce(0) { $0 + $1.count + 1 } - tailLines.reduce(0) { $0 + $1.count + 1 } - 600
        return (headLines + diffSection(plan, budget: budget) + tailLines).joined(separator: "\n")
    }

    /// The Mermaid graph of the shares that change and the table of access cells that change; nothing when
    /// the plan changes no share. A graph too large for a comment is left out with a sentence saying so.
    func sharingSection(_ plan: Plan) -> [String] {
        guard let access = plan.access, access.changesSharing else { return [] }
        var lines = ["**Sharing changes**", ""]
        let graph = SharingGraphRenderer().mermaid(SharingGraph(access.after, before: access.before, onlyChanged: true))
        if graph.count <= characterLimit / 4 {
            lines +=
                ["```mermaid"]
                + graph.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            lines += ["```", ""]
        } else {
            lines += [
                "The graph of what changes is too large for a comment: `sharelane show --format mermaid` draws the store after apply.",
                "",
            ]
        }
        lines += ["**Access changes**", ""]
        lines += AccessComparison(before: access.before, after: access.after).markdownChanges()
            .split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        lines.append("")
        return lines
    }

    /// The collapsed diff of every change, cut off before `budget` characters with a line saying what is
    /// left out.
    func diffSection(_ plan: Plan, budget: Int) -> [String] {
        var body: [String] = []
        var used = 0
        var shown = 0
        for entry in GeneratedRun.entries(plan, expand: expand) {
            var lines: [String] = []
            guard case .change(let change) = entry else {
                guard case .run(let run, let changes) = entry else { continue }
                // `~` is not a diff line; an update is `!` here, as single changes are.
                let line = run.action == .update ? "!" + run.line.dropFirst() : run.line
                let size = line.count + 1
                if used + size > budget { break }
                used += size
                body.append(DisplayText.escaped(String(line)))
                shown += changes.count
                continue
            }
            switch change.action {
            case .create:
                lines.append("+ \(change.address)")
                lines += TextPlanRenderer.attributeLines(change).map { "+     \($0)" }
            case .delete:
                lines.append("- \(change.address)")
                lines += TextPlanRenderer.attributeLines(change).map { "-     \($0)" }
            case .update:
                lines.append("! \(change.address)")
                for attribute in change.attributes {
                    if let before = attribute.before {
                        lines.append("-     \(attribute.name): \(before.displayString)")
                    }
                    if let after = attribute.after {
                        lines.append("+     \(attribute.name): \(after.displayString)")
                    }
                }
            }
            lines = lines.map { DisplayText.escaped($0) }
            let size = lines.reduce(0) { $0 + $1.count + 1 }
            if used + size > budget { break }
            used += size
            body += lines
            shown += 1
        }
        // A value holding a fence must not close ours.
        var fence = "```"
        while body.contains(where: { $0.contains(fence) }) { fence += "`" }
        let count = plan.changes.count
        var lines = [
            shown == count
                ? "<details><summary>Show \(count) \(count == 1 ? "change" : "changes")</summary>"
                : "<details><summary>Show the first \(shown) of \(count) changes</summary>",
            "", fence + "diff",
        ]
        lines += body
        lines.append(fence)
        lines.append("")
        lines.append("</details>")
        lines.append("")
        if shown < count {
            lines.append(
                "> [!NOTE]\n> \(count - shown) more changes are not shown: a comment holds at most 65,536 characters. "
                    + "See the full plan with `sharelane plan` (text) or save it with `sharelane plan --out plan.json`."
            )
            lines.append("")
        }
        return lines
    }
}
