import ShareKit

/// The CloudKit Schema Language (`.ckdb`), as `cktool export-schema` writes it and `cktool import-schema`
/// reads it: read into a `Schema` with file:line:column errors, and written back.
///
/// ```
/// DEFINE SCHEMA
///     RECORD TYPE Fasting (
///         "___recordID" REFERENCE QUERYABLE,
///         endDate TIMESTAMP QUERYABLE SORTABLE,
///         goal STRING,
///         GRANT WRITE TO "_creator",
///         GRANT CREATE TO "_icloud",
///         GRANT READ TO "_world"
///     );
/// ```
///
/// Roles and grants are read and passed over (sharelane's stores keep no security roles); the writer gives
/// every type the grants CloudKit gives a type created by a save. Comments and order do not survive a
/// round trip, as with Apple's tools.
public enum SchemaLanguage {
    /// The grants written for every record type: the public database's defaults.
    static let defaultGrants = [
        #"GRANT WRITE TO "_creator""#, #"GRANT CREATE TO "_icloud""#, #"GRANT READ TO "_world""#,
    ]

    // MARK: - Writing

    /// The schema as `.ckdb` text: record types in name order, system fields first, then fields by name.
    public static func text(_ schema: Schema) -> String {
        var lines = ["DEFINE SCHEMA"]
        for type in schema.orderedTypes {
            lines.append("")
            lines.append("    RECORD TYPE \(SchemaField.quotedIfNeeded(type.name)) (")
            let items = type.orderedFields.map(\.declaration) + defaultGrants
            for (index, item) in items.enumerated() {
                lines.append("        " + item + (index == items.count - 1 ? "" : ","))
            }
            lines.append("    );")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Field types

    /// A field's type and indexes as written after its name: `TIMESTAMP QUERYABLE SORTABLE`,
    /// `ENCRYPTED STRING`, `LIST<INT64> QUERYABLE`, `NUMBER PREFERRED AS DOUBLE`.
    public struct FieldSpec: Sendable, Hashable {
        public var type: FieldType
        public var isEncrypted: Bool
        public var indexes: SchemaIndexes
    }

    /// Reads the words of a field specification.
    /// - Throws: a message saying what is wrong (the caller adds the place).
    public static func fieldSpec(_ words: [String]) throws(SchemaLanguageProblem) -> FieldSpec {
        var rest = words[...]
        guard let first = rest.popFirst() else { throw SchemaLanguageProblem("a field needs a type, e.g. STRING") }
        var encrypted = false
        var word = first.uppercased()
        if word == "ENCRYPTED" {
            encrypted = true
            guard let next = rest.popFirst() else {
                throw SchemaLanguageProblem("ENCRYPTED needs a type after it, e.g. ENCRYPTED STRING")
            }
            word = next.uppercased()
        }
        var type: FieldType
        if word.hasPrefix("LIST<") && word.hasSuffix(">") {
            let inner = String(word.dropFirst(5).dropLast())
            guard let element = scalarType(inner), let list = element.listType else {
                throw SchemaLanguageProblem("unknown list element type `\(inner)`; \(typeWords)")
            }
            type = list
        } else if word == "NUMBER" {
            // A number a sandbox save added implicitly; its preferred type is what it holds.
            type = .int64
            if rest.first?.uppercased() == "PREFERRED" {
                rest.removeFirst()
                guard rest.popFirst()?.uppercased() == "AS", let preferred = rest.popFirst()?.uppercased(),
                    preferred == "INT64" || preferred == "DOUBLE"
                else { throw SchemaLanguageProblem("write NUMBER PREFERRED AS INT64 or NUMBER PREFERRED AS DOUBLE") }
                type = preferred == "DOUBLE" ? .double : .int64
            }
        } else if let scalar = scalarType(word) {
            type = scalar
        } else {
            let hint =
                Suggestion.closest(to: word, in: scalarWords).map { "; did you mean `\($0)`?" } ?? "; \(typeWords)"
            throw SchemaLanguageProblem("unknown field type `\(word)`\(hint)")
        }
        if encrypted, ![.bytes, .string, .double, .int64, .location, .timestamp].contains(type) {
            throw SchemaLanguageProblem(
                "\(type.rawValue) cannot be ENCRYPTED; only BYTES, STRING, DOUBLE, INT64, LOCATION and TIMESTAMP can")
        }
        var indexes: SchemaIndexes = []
        for word in rest {
            guard let index = SchemaIndexes(word: word) else {
                let hint = Suggestion.closest(to: word.uppercased(), in: ["QUERYABLE", "SORTABLE", "SEARCHABLE"])
                throw SchemaLanguageProblem(
                    "unknown index `\(word)`" + (hint.map { "; did you mean `\($0)`?" } ?? "")
                        + "; use QUERYABLE, SORTABLE or SEARCHABLE")
            }
            indexes.insert(index)
        }
        if encrypted, !indexes.isEmpty {
            throw SchemaLanguageProblem(
                "an ENCRYPTED field cannot be indexed; remove \(indexes.words.joined(separator: " "))")
        }
        if indexes.contains(.searchable), type != .string, type != .stringList {
            throw SchemaLanguageProblem("SEARCHABLE is for STRING fields only, not \(type.rawValue)")
        }
        return FieldSpec(type: type, isEncrypted: encrypted, indexes: indexes)
    }

    private static let scalarWords = [
        "STRING", "INT64", "DOUBLE", "TIMESTAMP", "BYTES", "REFERENCE", "ASSET", "LOCATION", "LIST<STRING>", "NUMBER",
        "ENCRYPTED",
    ]
    private static let typeWords =
        "use STRING, INT64, DOUBLE, TIMESTAMP, BYTES, REFERENCE, ASSET, LOCATION, LIST<TYPE> or ENCRYPTED TYPE"

    private static func scalarType(_ word: String) -> FieldType? {
        switch word {
        case "ASSET", "ASSETID": .assetID
        case "STRING", "INT64", "DOUBLE", "TIMESTAMP", "BYTES", "REFERENCE", "LOCATION": FieldType(rawValue: word)
        default: nil
        }
    }

    /// Checks a field against the system fields: their types are fixed.
    static func checkSystemField(_ name: String, _ spec: FieldSpec) throws(SchemaLanguageProblem) {
        guard SchemaRules.isSystemField(name) else { return }
        guard let type = SchemaRules.systemFields[name] else {
            throw SchemaLanguageProblem(
                "`\(name)` is not a system field; names starting with `_` are the system's ("
                    + SchemaRules.systemFields.keys.sorted().joined(separator: ", ") + ")")
        }
        guard spec.type == type, !spec.isEncrypted else {
            throw SchemaLanguageProblem("the system field `\(name)` is \(type.rawValue); only its indexes can be set")
        }
    }

    // MARK: - Reading

    /// Reads `.ckdb` text.
    /// - Throws: `RecipeErrors`, each at its file:line:column.
    public static func schema(from text: String, file: String) throws(RecipeErrors) -> Schema {
        var parser = Parser(tokens: tokenize(text, file: file), file: file)
        let schema = parser.parse()
        if !parser.errors.isEmpty { throw RecipeErrors(parser.errors) }
        return schema
    }

    struct Token {
        enum Kind { case word, quoted, symbol, end }
        var kind: Kind
        var text: String
        var location: SourceLocation
    }

    static func tokenize(_ text: String, file: String) -> [Token] {
        var tokens: [Token] = []
        let chars = Array(text)
        var i = 0
        var line = 1
        var column = 1
        func advance() {
            if chars[i] == "\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
            i += 1
        }
        while i < chars.count {
            let c = chars[i]
            let here = SourceLocation(file: file, line: line, column: column)
            if c.isWhitespace {
                advance()
            } else if c == "/" && i + 1 < chars.count && chars[i + 1] == "/"
                || c == "-" && i + 1 < chars.count && chars[i + 1] == "-"
            {
                while i < chars.count && chars[i] != "\n" { advance() }
            } else if c == "/" && i + 1 < chars.count && chars[i + 1] == "*" {
                advance()
                advance()
                while i < chars.count && !(chars[i] == "*" && i + 1 < chars.count && chars[i + 1] == "/") { advance() }
                if i < chars.count {
                    advance()
                    advance()
                }
            } else if c == "\"" {
                advance()
                var word = ""
                while i < chars.count && chars[i] != "\"" && chars[i] != "\n" {
                    word.append(chars[i])
                    advance()
                }
                if i < chars.count && chars[i] == "\"" { advance() }
                tokens.append(Token(kind: .quoted, text: word, location: here))
            } else if "(),;".contains(c) {
                tokens.append(Token(kind: .symbol, text: String(c), location: here))
                advance()
            } else {
                var word = ""
                // `LIST<INT64>` is one word.
                while i < chars.count, !chars[i].isWhitespace, !"(),;\"".contains(chars[i]) {
                    word.append(chars[i])
                    advance()
                }
                tokens.append(Token(kind: .word, text: word, location: here))
            }
        }
        tokens.append(Token(kind: .end, text: "", location: SourceLocation(file: file, line: line, column: column)))
        return tokens
    }

    struct Parser {
        var tokens: [Token]
        var file: String
        var position = 0
        var errors: [RecipeError] = []

        var current: Token { tokens[position] }

        mutating func next() -> Token {
            let token = tokens[position]
            if position < tokens.count - 1 { position += 1 }
            return token
        }

        func isWord(_ token: Token, _ word: String) -> Bool { token.kind == .word && token.text.uppercased() == word }

        mutating func report(_ message: String, _ location: SourceLocation) {
            errors.append(RecipeError(message, at: location))
        }

        /// Skips to just after the next `;` (or the end), to go on after an error.
        mutating func skipStatement() {
            while current.kind != .end {
                if next().text == ";" { return }
            }
        }

        mutating func parse() -> Schema {
            var schema = Schema()
            guard isWord(current, "DEFINE"), isWord(tokens[min(position + 1, tokens.count - 1)], "SCHEMA") else {
                report("a schema starts with `DEFINE SCHEMA`", current.location)
                return schema
            }
            _ = next()
            _ = next()
            var typeLocations: [String: SourceLocation] = [:]
            while current.kind != .end {
                let start = current
                if isWord(start, "CREATE") {
                    // CREATE ROLE name; roles are not kept.
                    skipStatement()
                } else if isWord(start, "RECORD") {
                    _ = next()
                    guard isWord(current, "TYPE") else {
                        report("expected `RECORD TYPE NAME (`", current.location)
                        skipStatement()
                        continue
                    }
                    _ = next()
                    let nameToken = next()
                    guard nameToken.kind == .word || nameToken.kind == .quoted, !nameToken.text.isEmpty else {
                        report("expected a record type name after `RECORD TYPE`", nameToken.location)
                        skipStatement()
                        continue
                    }
                    if let first = typeLocations[nameToken.text] {
                        report(
                            "record type `\(nameToken.text)` is defined twice (first at \(first))", nameToken.location)
                    }
                    typeLocations[nameToken.text] = nameToken.location
                    if let type = recordType(nameToken.text) { schema.recordTypes[type.name] = type }
                } else {
                    report(
                        "expected `RECORD TYPE` or `CREATE ROLE`, not `\(start.text)`", start.location)
                    skipStatement()
                }
            }
            return schema
        }

        /// `( item, item, … );` after the type's name.
        mutating func recordType(_ name: String) -> RecordTypeSchema? {
            guard current.text == "(" && current.kind == .symbol else {
                report("expected `(` after `RECORD TYPE \(name)`", current.location)
                skipStatement()
                return nil
            }
            _ = next()
            var type = RecordTypeSchema(name)
            var item: [Token] = []
            while true {
                let token = next()
                if token.kind == .end {
                    report("record type `\(name)` is not closed with `);`", token.location)
                    return type
                }
                if token.kind == .symbol && (token.text == "," || token.text == ")") {
                    if !item.isEmpty { addItem(item, to: &type) }
                    item = []
                    if token.text == ")" { break }
                    continue
                }
                if token.kind == .symbol {
                    report("unexpected `\(token.text)` in record type `\(name)`", token.location)
                    continue
                }
                item.append(token)
            }
            if current.kind == .symbol && current.text == ";" {
                _ = next()
            } else {
                report("expected `;` after the `)` of record type `\(name)`", current.location)
            }
            return type
        }

        /// Inside `GRANT READ, WRITE TO role`: the commas split the grant into several items.
        var grantOpen = false

        mutating func addItem(_ item: [Token], to type: inout RecordTypeSchema) {
            guard let first = item.first else { return }
            let word = first.kind == .word ? first.text.uppercased() : ""
            if word == "GRANT" || (grantOpen && ["READ", "CREATE", "WRITE"].contains(word)) {
                grantOpen = !item.contains { $0.kind == .word && $0.text.uppercased() == "TO" }
                return
            }
            guard item.count >= 2 else {
                report("field `\(first.text)` needs a type, e.g. `\(first.text) STRING`", first.location)
                return
            }
            if first.kind == .word,
                ["QUERYABLE", "SORTABLE", "SEARCHABLE", "PREFERRED"].contains(first.text.uppercased())
            {
                report("`\(first.text)` is a keyword; write the field name in double quotes", first.location)
                return
            }
            if type.fields[first.text] != nil {
                report("field `\(first.text)` of `\(type.name)` is defined twice", first.location)
                return
            }
            do {
                let spec = try SchemaLanguage.fieldSpec(item.dropFirst().map(\.text))
                try SchemaLanguage.checkSystemField(first.text, spec)
                type.fields[first.text] = SchemaField(
                    first.text, spec.type, isEncrypted: spec.isEncrypted, indexes: spec.indexes)
            } catch let problem {
                report(problem.message, item[1].location)
            }
        }
    }
}

/// What is wrong with a field specification or a `.ckdb` statement; the caller adds the place.
public struct SchemaLanguageProblem: Error, Sendable, Hashable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
