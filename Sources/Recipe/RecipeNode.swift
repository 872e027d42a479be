import ShareKit

/// A YAML node as the loader works on it: Yams' tree with aliases expanded, keys as strings, and every node
/// carrying the file, line and column it came from (includes merge nodes of several files).
struct RecipeNode: Sendable {
    enum Content: Sendable {
        /// A scalar; `plain` is false for quoted and block scalars, whose text is never typed (`"2"` stays a string).
        case scalar(String, plain: Bool)
        case sequence([RecipeNode])
        case mapping([RecipePair])
    }

    var content: Content
    /// An explicit tag other than the standard ones, such as `!ref`; nil when the node has none.
    var tag: String?
    var location: SourceLocation
    /// How many columns after `location` a scalar's text starts, when the text is the source's characters one
    /// for one on one line (a plain, or quoted without escapes, scalar); -1 otherwise. A message about one
    /// `${NAME}` in it then points at the reference, not at the value.
    var textColumn: Int8 = -1

    init(_ content: Content, tag: String? = nil, location: SourceLocation) {
        self.content = content
        self.tag = tag
        self.location = location
    }

    /// Where the character `offset` of the scalar's text is written, when `textColumn` knows; else `location`.
    func location(ofCharacter offset: Int) -> SourceLocation {
        guard textColumn >= 0 else { return location }
        var place = location
        place.column += Int(textColumn) + offset
        return place
    }

    /// The scalar text, or nil for a collection.
    var scalar: String? {
        if case .scalar(let s, _) = content { return s }
        return nil
    }

    var pairs: [RecipePair]? {
        if case .mapping(let p) = content { return p }
        return nil
    }

    var items: [RecipeNode]? {
        if case .sequence(let n) = content { return n }
        return nil
    }

    /// The value under `key` in a mapping.
    subscript(key: String) -> RecipeNode? {
        pairs?.first { $0.key == key }?.value
    }

    /// What the node is, for messages, in the words the user wrote: `` `yes` ``, `the quoted text "false"`,
    /// `null`, `a list`, `a mapping`.
    var kindDescription: String {
        switch content {
        case .scalar(let s, let plain):
            if plain, ScalarResolver.isNull(s) { return "null" }
            let shown = DisplayText.escaped(s.count > 40 ? String(s.prefix(40)) + "…" : s)
            return plain ? "`\(shown)`" : "the quoted text \"\(shown)\""
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        }
    }
}

/// A key and its value in a mapping; keys are scalars in recipes.
struct RecipePair: Sendable {
    var key: String
    var keyLocation: SourceLocation
    var value: RecipeNode
}
