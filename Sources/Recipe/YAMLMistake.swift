import Foundation

/// The YAML mistakes people make most, said as a person would rather than in the parser's words: a tab
/// where YAML wants spaces ("found character that cannot start any token"), and a line indented to a column
/// no mapping above it uses ("did not find expected key").
enum YAMLMistake {
    /// What to say instead of the parser's `problem` at `line`:`column` (1-based), or nil to keep its words.
    /// - Parameter contextLine: where the mapping the parser was reading starts.
    static func said(
        problem: String, line: Int, column: Int, contextLine: Int?, in text: String
    ) -> String? {
        let lines = lines(of: text)
        guard line >= 1, line <= lines.count else { return nil }
        let here = lines[line - 1]
        if problem.contains("cannot start any token"), column >= 1, column <= here.count,
            here[here.index(here.startIndex, offsetBy: column - 1)] == "\t"
        {
            let indenting = here.prefix(column - 1).allSatisfy { $0 == " " || $0 == "\t" }
            return indenting
                ? "line \(line) is indented with a tab; YAML indents with spaces only: indent with spaces"
                : "a tab in line \(line), column \(column), where YAML allows none: write spaces instead"
        }
        guard problem.contains("did not find expected key") || problem.contains("mapping values are not allowed")
        else { return nil }
        // The line that is out of place: this one when it starts here, else the last line with text above it.
        var bad = line
        if indentation(of: here) + 1 != column || here.allSatisfy(\.isWhitespace) {
            while bad > 1 {
                bad -= 1
                let text = lines[bad - 1]
                if !text.allSatisfy(\.isWhitespace), !text.drop(while: { $0 == " " }).hasPrefix("#") { break }
            }
        }
        let badText = lines[bad - 1].trimmingCharacters(in: .whitespaces)
        let badColumn = indentation(of: lines[bad - 1]) + 1
        // The columns the lines above it start in, back to the mapping the parser was reading.
        var columns = Set<Int>()
        // The parser's mapping may start below the line found out of place (a line it skipped as blank).
        for index in min(max(1, contextLine ?? 1), bad)..<bad {
            let text = lines[index - 1]
            guard !text.allSatisfy(\.isWhitespace), !text.drop(while: { $0 == " " }).hasPrefix("#") else { continue }
            columns.insert(indentation(of: text) + 1)
        }
        columns.remove(badColumn)
        let around = columns.sorted().filter { abs($0 - badColumn) <= 4 }
        let shown = badText.count > 40 ? String(badText.prefix(40)) + "…" : badText
        var message = "check the indentation of line \(bad)"
        // The first key of a mapping sets its column, so the line above may be the one out of place: the
        // parser finds out only at the next key.
        let above = textLines(before: bad, in: lines)
        if let first = above.first, indentation(of: lines[first - 1]) + 1 != badColumn,
            above.count < 2 || indentation(of: lines[above[1] - 1]) < indentation(of: lines[first - 1])
        {
            message += ", and of line \(first) above it"
        }
        message += ": `\(shown)` starts in column \(badColumn)"
        if !around.isEmpty {
            message +=
                ", but the lines above it start in column "
                + around.map(String.init).joined(separator: " or ")
        }
        return message + "; a key starts in the same column as the other keys of its mapping, with spaces"
    }

    /// The text's lines as the YAML parser numbers them: a line ends at a line feed, a carriage return (alone,
    /// or before a line feed), or one of Unicode's line breaks YAML 1.1 counts (NEL, LS, PS). Splitting at line
    /// feeds alone numbered a line holding a lone carriage return one short of the parser, and the mapping the
    /// parser named could then start below the line found out of place.
    static func lines(of text: String) -> [Substring] {
        text.split(omittingEmptySubsequences: false) { character in
            character == "\n" || character == "\r" || character == "\r\n" || character == "\u{85}"
                || character == "\u{2028}" || character == "\u{2029}"
        }
    }

    /// The numbers of the lines with text (not blank, not a comment) before `line`, nearest first, at most two.
    private static func textLines(before line: Int, in lines: [Substring]) -> [Int] {
        var found: [Int] = []
        var index = line - 1
        while index >= 1, found.count < 2 {
            let text = lines[index - 1]
            if !text.allSatisfy(\.isWhitespace), !text.drop(while: { $0 == " " }).hasPrefix("#") { found.append(index) }
            index -= 1
        }
        return found
    }

    private static func indentation(of line: Substring) -> Int {
        line.prefix { $0 == " " }.count
    }
}
