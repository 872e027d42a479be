import ShareKit

/// Two access matrices of the same store side by side (a plan's before and after): every user and share of
/// either, each cell the right before and after, the changed ones marked.
public struct AccessComparison: Sendable {
    public var before: AccessMatrix
    public var after: AccessMatrix

    public init(before: SharingSnapshot, after: SharingSnapshot) {
        self.before = AccessMatrix(before)
        self.after = AccessMatrix(after)
    }

    /// The cells that differ.
    public var changes: [AccessMatrix.Change] { AccessMatrix.changes(from: before, to: after) }

    /// What a missing cell (a share that does not exist on that side) reads as.
    static func text(_ cell: AccessCell?) -> String { cell?.text ?? "-" }

    /// The matrix as text: a row per user, a column per share of either side; an unchanged cell reads as the
    /// right, a changed one as `before → after` with a `*` before it. `title` heads it.
    public func text(title: String, style: AccessStyle = .plain) -> String {
        let (users, columns) = AccessMatrix.union(before, after)
        var lines = [DisplayText.escaped(title)]
        guard !columns.isEmpty else {
            lines.append("No shares before or after.")
            return lines.joined(separator: "\n") + "\n"
        }
        // Cells start with two characters for the change mark (`* ` or blanks); the headings line up with them.
        let header = ["user"] + columns.map { "  " + DisplayText.escaped($0.label) }
        var body: [[(text: String, cell: AccessCell?)]] = []
        let (beforePositions, afterPositions) = (AccessMatrix.Positions(before), AccessMatrix.Positions(after))
        for user in users {
            var line: [(text: String, cell: AccessCell?)] = [(DisplayText.escaped(user.label), nil)]
            for column in columns {
                let old = before.cell(user: user.recordName, column: column.id, beforePositions)
                let new = after.cell(user: user.recordName, column: column.id, afterPositions)
                line.append(
                    !AccessMatrix.differ(old, new)
                        ? ("  " + Self.text(new ?? old), nil) : ("* \(Self.text(old)) → \(Self.text(new))", new ?? old))
            }
            body.append(line)
        }
        lines.append("")
        lines += TextTable.lines(header: header, rows: body, style: style)
        lines.append("")
        let count = changes.count
        lines.append(
            count == 0
                ? "The plan changes no one's access."
                : "* \(count) cell\(count == 1 ? "" : "s") change\(count == 1 ? "s" : "").")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The changed cells as a markdown table: user, share, before, after; at most `limit` rows, then how many
    /// more there are.
    public func markdownChanges(limit: Int = 50) -> String {
        let changes = self.changes
        guard !changes.isEmpty else { return "No one's access changes.\n" }
        var lines = ["| user | share | before | after |", "|---|---|---|---|"]
        for change in changes.prefix(limit) {
            lines.append(
                "| \(AccessMatrixRenderer.markdownEscaped(change.user.label)) | `\(AccessMatrixRenderer.markdownEscaped(change.column))` | "
                    + "\(change.before.map(AccessMatrixRenderer.markdownCell) ?? "-") | \(change.after.map(AccessMatrixRenderer.markdownCell) ?? "-") |"
            )
        }
        if changes.count > limit {
            lines.append("")
            lines.append(
                "…and \(changes.count - limit) more access changes (`sharelane plan --show-access` lists them all).")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
