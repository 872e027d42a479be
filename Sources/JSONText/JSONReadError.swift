/// Where JSON text stops being what its reader expects, and what it expected there.
///
/// The line and column are 1-based, the column counted in characters (Unicode scalars) from the start of the
/// line, so that they point where an editor's cursor would.
package struct JSONReadError: Error, Equatable, Sendable {
    /// The line, from 1.
    package var line: Int
    /// The column of the line, from 1.
    package var column: Int
    /// The byte of the text, from 0.
    package var offset: Int
    /// What was wrong there, as a clause: `expected a number`, `expected `,` or `}``.
    package var fault: String

    package init(line: Int, column: Int, offset: Int, fault: String) {
        self.line = line
        self.column = column
        self.offset = offset
        self.fault = fault
    }
}

// MARK: - CustomStringConvertible

extension JSONReadError: CustomStringConvertible {
    /// `line 3, column 17: expected a number`.
    package var description: String { "line \(line), column \(column): \(fault)" }
}
