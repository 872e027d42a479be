/// One problem in a recipe, at a place in a file.
///
/// Prints as `FILE:LINE:COLUMN: error: MESSAGE`, the form compilers use, so editors and CI logs link to it.
public struct RecipeError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Where the problem is; nil for problems that have no place (a file that cannot be read).
    public var location: SourceLocation?
    /// What is wrong and, where it helps, what to do.
    public var message: String
    /// The file, when there is no line to point at.
    public var file: String?
    /// A warning: said, but the recipe still loads.
    public var isWarning = false

    public init(_ message: String, at location: SourceLocation) {
        self.location = location
        self.message = message
        self.file = location.file
    }

    public init(_ message: String, file: String) {
        self.location = nil
        self.message = message
        self.file = file
    }

    public var description: String {
        let kind = isWarning ? "warning" : "error"
        if let location { return "\(location): \(kind): \(message)" }
        if let file { return "\(file): \(kind): \(message)" }
        return "\(kind): \(message)"
    }
}

/// Every problem found in a recipe, thrown together so that one run reports them all.
public struct RecipeErrors: Error, Sendable, CustomStringConvertible {
    /// The problems, in the order of the files and lines they point at.
    public var errors: [RecipeError]

    /// Warnings found alongside (a zone named like a recipe key): often the cause of the errors.
    public var warnings: [RecipeError] = []

    public init(_ errors: [RecipeError], warnings: [RecipeError] = []) {
        self.errors = errors
        self.warnings = warnings
    }

    /// One line per problem, the warnings first.
    public var description: String { (warnings + errors).map(\.description).joined(separator: "\n") }
}
