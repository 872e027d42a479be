/// How `sharelane access` writes the matrix.
public enum AccessFormat: String, Sendable, CaseIterable {
    /// Aligned columns, coloured on a terminal.
    case text
    /// A table for a pull request or a wiki.
    case markdown
    /// For scripts.
    case json
    /// A page that needs nothing else: its style is inside it.
    case html
}
