/// Aligned text columns, two spaces apart, trailing blanks trimmed; a cell is painted after it is padded, so
/// colour codes do not count towards the widths.
enum TextTable {
    /// The heading line, then a line per row. A cell with an `AccessCell` is painted by `style.cell`; the
    /// others (the user column) are left plain.
    static func lines(header: [String], rows: [[(text: String, cell: AccessCell?)]], style: AccessStyle) -> [String] {
        var widths = header.map(\.count)
        for row in rows {
            for (index, entry) in row.enumerated() { widths[index] = max(widths[index], entry.text.count) }
        }
        func pad(_ text: String, _ index: Int) -> String {
            text + String(repeating: " ", count: max(0, widths[index] - text.count))
        }
        func trimmed(_ line: String) -> String {
            var line = line
            while line.hasSuffix(" ") { line.removeLast() }
            return line
        }
        var lines = [trimmed(header.indices.map { style.heading(pad(header[$0], $0)) }.joined(separator: "  "))]
        for row in rows {
            let parts = row.indices.map { index in
                let padded = pad(row[index].text, index)
                return row[index].cell.map { style.cell(padded, $0) } ?? padded
            }
            lines.append(trimmed(parts.joined(separator: "  ")))
        }
        return lines
    }
}
