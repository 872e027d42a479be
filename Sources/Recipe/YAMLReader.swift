import Foundation
import Yams

/// Reads one YAML file into a `RecipeNode` tree, within limits that keep hostile input cheap.
///
/// Limits (documented in Docs/RecipeFormat.md):
/// - a recipe file is at most `maxFileSize` bytes (use `repeat:` to generate large data sets);
/// - it must be UTF-8 text without NUL bytes;
/// - libyaml refuses more than 1000 levels of nesting; the loader refuses more than `maxDepth`;
/// - aliases are expanded into at most `maxNodes` nodes in all ("billion laughs" stops there);
/// - an alias may not be used as a mapping key (Yams would hash the expanded key).
struct YAMLReader {
    static let maxFileSize = 16 * 1024 * 1024
    static let maxDepth = 200
    static let maxNodes = 2_000_000

    /// The name shown in messages.
    var displayPath: String

    /// Reads and parses the file at `path` (as given by the user, relative to the working directory or absolute).
    static func read(path: String, displayPath: String) throws(RecipeErrors) -> RecipeNode {
        let reader = YAMLReader(displayPath: displayPath)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw RecipeErrors([RecipeError("no such file; check the path", file: displayPath)])
        }
        if isDirectory.boolValue {
            throw RecipeErrors([RecipeError("is a directory, not a recipe file", file: displayPath)])
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
        if size > maxFileSize {
            throw RecipeErrors([
                RecipeError(
                    "the file is \(size / 1_048_576) MB; recipes are limited to \(maxFileSize / 1_048_576) MB "
                        + "(generate large data sets with `repeat:`)", file: displayPath)
            ])
        }
        // Read at most one byte past the limit: a device or a growing file cannot make the read unbounded.
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw RecipeErrors([RecipeError("cannot be read; check its permissions", file: displayPath)])
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: maxFileSize + 1) ?? Data()
        } catch {
            throw RecipeErrors([RecipeError("cannot be read (\(error.localizedDescription))", file: displayPath)])
        }
        if data.count > maxFileSize {
            throw RecipeErrors([
                RecipeError(
                    "the file is larger than \(maxFileSize / 1_048_576) MB, the limit for recipes", file: displayPath)
            ])
        }
        return try reader.parse(data: data)
    }

    func parse(data: Data) throws(RecipeErrors) -> RecipeNode {
        if let nul = data.firstIndex(of: 0) {
            let location = Self.location(ofOffset: nul - data.startIndex, in: data, file: displayPath)
            throw RecipeErrors([
                RecipeError("the file contains binary data (a NUL byte); a recipe is YAML text", at: location)
            ])
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw RecipeErrors([
                RecipeError("the file is not UTF-8 text; a recipe is YAML text in UTF-8", file: displayPath)
            ])
        }
        return try parse(text: text)
    }

    func parse(text: String) throws(RecipeErrors) -> RecipeNode {
        if text.utf8.count > Self.maxFileSize {
            throw RecipeErrors([
                RecipeError(
                    "the recipe is larger than \(Self.maxFileSize / 1_048_576) MB, the limit for recipes",
                    file: displayPath)
            ])
        }
        if let mark = Self.aliasUsedAsKey(in: text) {
            throw RecipeErrors([
                RecipeError(
                    "an alias is used as a mapping key; recipes allow aliases only as values",
                    at: SourceLocation(file: displayPath, line: mark.line, column: mark.column))
            ])
        }
        // The parser owns the anchors; kept alive, they identify shared (aliased) subtrees while sizing.
        let parser: Parser
        let root: Node?
        do {
            // Yams resolves tags only to find duplicate keys, hashing each key with its resolved tag; the
            // default resolver runs regular expressions on every key (a tenth of loading a 2,000-line recipe).
            // The basic one gives every plain key `str`: keys are names here, and a key written
            // once plain and once quoted (`1:` and `"1":`) is the same name, so it is a duplicate too.
            // Scalars are typed by `ScalarResolver`, not by the parser.
            parser = try Parser(yaml: text, resolver: .basic)
            root = try parser.singleRoot()
        } catch let error as YamlError {
            throw RecipeErrors([convert(error, text: text)])
        } catch {
            throw RecipeErrors([RecipeError("malformed YAML: \(error)", file: displayPath)])
        }
        guard let root else {
            throw RecipeErrors([
                RecipeError("the recipe is empty; it needs at least `sharelane: 1` and `name:`", file: displayPath)
            ])
        }
        // Size the document with aliases expanded, counting each anchored subtree once, before expanding it.
        var sizes: [ObjectIdentifier: Int] = [:]
        var overflowAt: Mark? = nil
        let size = withExtendedLifetime(parser) { expandedSize(root, sizes: &sizes, overflowAt: &overflowAt) }
        if size > Self.maxNodes {
            let mark = overflowAt ?? root.mark
            throw RecipeErrors([
                RecipeError(
                    "the recipe expands to more than \(Self.maxNodes) YAML nodes (aliases that expand exponentially?)",
                    at: SourceLocation(file: displayPath, line: mark?.line ?? 1, column: mark?.column ?? 1))
            ])
        }
        var budget = Self.maxNodes
        return try convert(root, depth: 0, budget: &budget)
    }

    /// The number of nodes `node` has once aliases are expanded, stopping just past `maxNodes`.
    private func expandedSize(_ node: Node, sizes: inout [ObjectIdentifier: Int], overflowAt: inout Mark?) -> Int {
        let key = node.anchor.map(ObjectIdentifier.init)
        if let key, let known = sizes[key] { return known }
        var total = 1
        switch node {
        case .scalar, .alias:
            break
        case .sequence(let sequence):
            for item in sequence {
                total += expandedSize(item, sizes: &sizes, overflowAt: &overflowAt)
                if total > Self.maxNodes { break }
            }
        case .mapping(let mapping):
            for (key, value) in mapping {
                total += expandedSize(key, sizes: &sizes, overflowAt: &overflowAt)
                total += expandedSize(value, sizes: &sizes, overflowAt: &overflowAt)
                if total > Self.maxNodes { break }
            }
        }
        if total > Self.maxNodes {
            if overflowAt == nil { overflowAt = node.mark }
            return Self.maxNodes + 1
        }
        if let key { sizes[key] = total }
        return total
    }

    // MARK: - Yams → RecipeNode

    private func location(_ node: Node) -> SourceLocation {
        let mark = node.mark
        return SourceLocation(file: displayPath, line: mark?.line ?? 1, column: mark?.column ?? 1)
    }

    private static let standardTagPrefix = "tag:yaml.org,2002:"

    private func convert(_ node: Node, depth: Int, budget: inout Int) throws(RecipeErrors) -> RecipeNode {
        let here = location(node)
        guard depth < Self.maxDepth else {
            throw RecipeErrors([RecipeError("the recipe nests deeper than \(Self.maxDepth) levels", at: here)])
        }
        budget -= 1
        guard budget >= 0 else {
            throw RecipeErrors([
                RecipeError(
                    "the recipe expands to more than \(Self.maxNodes) YAML nodes (aliases that expand exponentially?)",
                    at: here)
            ])
        }
        // The tag as written (`Node.tag` would run the resolver's regular expressions on every scalar).
        let rawTag: String
        switch node {
        case .scalar(let scalar): rawTag = scalar.tag.rawValue
        case .sequence(let sequence): rawTag = sequence.tag.rawValue
        case .mapping(let mapping): rawTag = mapping.tag.rawValue
        case .alias: rawTag = ""
        }
        var customTag: String? = nil
        var plainByTag: Bool? = nil
        if rawTag.hasPrefix(Self.standardTagPrefix) {
            let short = String(rawTag.dropFirst(Self.standardTagPrefix.count))
            switch short {
            case "str": plainByTag = false
            case "binary": customTag = "!bytes"
            case "map", "seq": break
            default: plainByTag = true
            }
        } else if !rawTag.isEmpty && rawTag != "!" {
            customTag = rawTag
        } else if rawTag == "!" {
            plainByTag = false
        }
        switch node {
        case .scalar(let scalar):
            let plain = plainByTag ?? (scalar.style == .plain)
            var read = RecipeNode(.scalar(scalar.string, plain: plain), tag: customTag, location: here)
            if customTag == nil, !scalar.string.contains(where: \.isNewline) {
                switch scalar.style {
                case .plain: read.textColumn = 0
                case .singleQuoted where !scalar.string.contains("'"): read.textColumn = 1
                case .doubleQuoted where !scalar.string.contains(where: { $0 == "\"" || $0 == "\\" }):
                    read.textColumn = 1
                default: break
                }
            }
            return read
        case .sequence(let sequence):
            var items: [RecipeNode] = []
            items.reserveCapacity(sequence.count)
            for item in sequence {
                items.append(try convert(item, depth: depth + 1, budget: &budget))
            }
            return RecipeNode(.sequence(items), tag: customTag, location: here)
        case .mapping(let mapping):
            var pairs: [RecipePair] = []
            pairs.reserveCapacity(mapping.count)
            var merged: [RecipePair] = []
            for (keyNode, valueNode) in mapping {
                guard case .scalar(let keyScalar) = keyNode else {
                    throw RecipeErrors([
                        RecipeError(
                            "mapping keys must be plain text, not \(keyNode.mapping != nil ? "a mapping" : "a list")",
                            at: location(keyNode))
                    ])
                }
                let value = try convert(valueNode, depth: depth + 1, budget: &budget)
                if keyScalar.string == "<<" && keyScalar.style == .plain {
                    // YAML merge key: the mappings it names fill in keys this mapping does not set.
                    let sources = value.items ?? [value]
                    for source in sources {
                        guard let sourcePairs = source.pairs else {
                            throw RecipeErrors([
                                RecipeError(
                                    "`<<` merges mappings; this is \(source.kindDescription)", at: source.location)
                            ])
                        }
                        merged.append(contentsOf: sourcePairs)
                    }
                    continue
                }
                pairs.append(RecipePair(key: keyScalar.string, keyLocation: location(keyNode), value: value))
            }
            for pair in merged where !pairs.contains(where: { $0.key == pair.key }) {
                pairs.append(pair)
            }
            return RecipeNode(.mapping(pairs), tag: customTag, location: here)
        case .alias:
            throw RecipeErrors([RecipeError("unresolved alias", at: here)])
        }
    }

    private func convert(_ error: YamlError, text: String) -> RecipeError {
        switch error {
        case .scanner(let context, let problem, let mark, _),
            .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            if let said = YAMLMistake.said(
                problem: problem, line: mark.line, column: mark.column, contextLine: context?.mark.line,
                in: text)
            {
                return RecipeError(
                    "malformed YAML: " + said,
                    at: SourceLocation(file: displayPath, line: mark.line, column: mark.column))
            }
            var message = "malformed YAML: \(problem)"
            if let context {
                message += " (\(context.text) at line \(context.mark.line), column \(context.mark.column))"
            }
            if problem.contains("Maximum nesting level") || (context?.text.contains("Maximum nesting level") ?? false) {
                message = "malformed YAML: the recipe nests deeper than libyaml's limit of 1000 levels"
            }
            return RecipeError(message, at: SourceLocation(file: displayPath, line: mark.line, column: mark.column))
        case .reader(let problem, let offset, _, let yaml):
            if let offset, let lc = Self.lineColumn(ofCharacterOffset: offset, in: yaml) {
                return RecipeError(
                    "malformed YAML: \(problem)",
                    at: SourceLocation(file: displayPath, line: lc.line, column: lc.column))
            }
            return RecipeError("malformed YAML: \(problem)", file: displayPath)
        case .duplicatedKeysInMapping(let duplicates, let context):
            // Yams points at the first occurrence; the mistake is the later one, so point there.
            let keys = duplicates.map { "`\($0)`" }.joined(separator: ", ")
            let first = context.mark
            let again = duplicates.first.flatMap {
                Self.repeatedKey($0, after: (first.line, first.column), in: context.text)
            }
            return RecipeError(
                "duplicate key \(keys) in a mapping (first at line \(first.line)); each key may appear once",
                at: SourceLocation(
                    file: displayPath, line: again?.line ?? first.line, column: again?.column ?? first.column))
        case .memory:
            return RecipeError("malformed YAML: the parser ran out of memory", file: displayPath)
        default:
            return RecipeError("malformed YAML: \(error)", file: displayPath)
        }
    }

    // MARK: - Positions

    /// Where a block mapping's key written at `first` (line, column) is written again: the next line at the
    /// same indentation that starts with the key (plain or quoted) and a colon, before the mapping ends. Nil
    /// when it is not found that way (a flow mapping `{a: 1, a: 2}`).
    static func repeatedKey(_ key: String, after first: (line: Int, column: Int), in text: String) -> (
        line: Int, column: Int
    )? {
        let indent = first.column - 1
        let lines = YAMLMistake.lines(of: text)
        guard first.line >= 1, first.line <= lines.count else { return nil }
        for number in (first.line + 1)..<(lines.count + 1) {
            let line = lines[number - 1]
            let body = line.drop { $0 == " " }
            if body.isEmpty || body.hasPrefix("#") { continue }
            let spaces = line.count - body.count
            if spaces < indent { return nil }
            guard spaces == indent else { continue }
            for written in [key, "\"\(key)\"", "'\(key)'"] where body.hasPrefix(written) {
                if body.dropFirst(written.count).drop(while: { $0 == " " }).hasPrefix(":") {
                    return (number, first.column)
                }
            }
        }
        return nil
    }

    static func location(ofOffset offset: Int, in data: Data, file: String) -> SourceLocation {
        var line = 1
        var column = 1
        for byte in data.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return SourceLocation(file: file, line: line, column: column)
    }

    static func lineColumn(ofCharacterOffset offset: Int, in text: String) -> (line: Int, column: Int)? {
        var line = 1
        var column = 1
        var count = 0
        for ch in text.unicodeScalars {
            if count == offset { return (line, column) }
            if ch == "\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
            count += 1
        }
        return count == offset ? (line, column) : nil
    }

    /// Finds an alias written where a mapping key goes (`*a : x`, `? *a`, `[*a]: x`), which Yams would hash
    /// in full, expanding it. Conservative: it may flag such text inside a quoted string too.
    static func aliasUsedAsKey(in text: String) -> (line: Int, column: Int)? {
        let bytes = Array(text.utf8)
        var line = 1
        var lineStart = 0
        var i = 0
        var atLineStartOnlySpaces = true
        var explicitKeyLine = false
        func isNameByte(_ b: UInt8) -> Bool {
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x5F
        }
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x0A {
                line += 1
                lineStart = i + 1
                atLineStartOnlySpaces = true
                explicitKeyLine = false
                i += 1
                continue
            }
            if atLineStartOnlySpaces {
                if b == 0x20 || b == 0x09 || b == 0x2D {  // indentation and `- `
                    i += 1
                    continue
                }
                atLineStartOnlySpaces = false
                if b == 0x23 {  // a whole-line comment
                    while i < bytes.count && bytes[i] != 0x0A { i += 1 }
                    continue
                }
                if b == 0x3F { explicitKeyLine = true }  // `? key`
            }
            if b == 0x2A {  // `*`
                let previous = i > 0 ? bytes[i - 1] : 0x20
                let startsToken =
                    previous == 0x20 || previous == 0x09 || previous == 0x0A || previous == 0x5B
                    || previous == 0x7B || previous == 0x2C || previous == 0x3F || previous == 0x2D
                var j = i + 1
                while j < bytes.count && isNameByte(bytes[j]) { j += 1 }
                if startsToken && j > i + 1 {
                    let column = String(decoding: bytes[lineStart..<i], as: UTF8.self).unicodeScalars.count + 1
                    if explicitKeyLine { return (line, column) }
                    var k = j
                    while k < bytes.count
                        && (bytes[k] == 0x20 || bytes[k] == 0x09 || bytes[k] == 0x5D || bytes[k] == 0x7D)
                    {
                        k += 1
                    }
                    if k < bytes.count && bytes[k] == 0x3A {  // `:`
                        return (line, column)
                    }
                }
                i = max(j, i + 1)
                continue
            }
            i += 1
        }
        return nil
    }
}
