/// A variable file (`--var-file FILE.yaml`), as Terraform's `-var-file`: a mapping of variable names to
/// scalar values, which override the recipe's `vars:` as `--var` does.
///
/// ```yaml
/// owner_email: ann@example.com
/// topic_access: read-only
/// ```
public enum VariableFile {
    /// The file's variables, in the order written.
    ///
    /// - Throws: `RecipeErrors`, each with its file:line:column, for a file that cannot be read, is not a
    ///   mapping, or holds a value that is not a scalar.
    public static func load(path: String) throws(RecipeErrors) -> [(key: String, value: String)] {
        let root = try YAMLReader.read(path: path, displayPath: path)
        guard let pairs = root.pairs else {
            if case .scalar(let s, true) = root.content, ScalarResolver.isNull(s) { return [] }
            throw RecipeErrors([
                RecipeError(
                    "a variable file is a mapping of names to values (`name: value`), not \(root.kindDescription)",
                    at: root.location)
            ])
        }
        var variables: [(key: String, value: String)] = []
        var errors: [RecipeError] = []
        for pair in pairs {
            guard let value = Variables.value(of: pair, errors: &errors) else { continue }
            variables.append((pair.key, value))
        }
        if !errors.isEmpty { throw RecipeErrors(errors) }
        return variables
    }
}
