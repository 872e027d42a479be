import Foundation
import ShareKit

/// Where `${NAME}` looks, in order: `--var`/lane parameters, `vars:`, the process environment, `.env.NAME`
/// (with `--env NAME`), then `.env`.
struct Variables {
    var overrides: [String: String]
    var vars: [String: String]
    var environment: [String: String]
    /// `.env.NAME` entries, then `.env` entries, each with the place it was set.
    var envFiles: [[String: String]]
    /// Where each environment variable consulted is noted.
    var log: InputLog?
    /// Names a lane step registers (`register: NAME`): `${NAME}` and `${NAME.key}` are values a lane hands on
    /// while it runs, left for the lane runner, as `${share_url:…}` and `${record_name:…}` are.
    var runtimeNames: Set<String> = []

    /// Whether `${body}` names a value only a running lane has.
    func isRuntimeReference(_ body: Substring) -> Bool {
        if body.hasPrefix("share_url:") || body.hasPrefix("record_name:") { return true }
        let name = body.split(separator: ".", maxSplits: 1).first ?? body
        return runtimeNames.contains(String(name))
    }

    func value(of name: String) -> String? {
        if let v = overrides[name] { return v }
        if let v = vars[name] { return v }
        log?.consulted(variable: name)
        if let v = environment[name] { return v }
        for file in envFiles {
            if let v = file[name] { return v }
        }
        return nil
    }

    /// The process environment's value of `name`, noted in the log.
    private func environmentValue(of name: String) -> String? {
        log?.consulted(variable: name)
        return environment[name]
    }

    /// The names a misspelt variable is compared with (the environment is left out: too many, too private).
    /// A lane's registered values count: `${lnik}` is most often `${link}` mistyped.
    var suggestableNames: [String] { Array(Set(overrides.keys).union(vars.keys).union(runtimeNames)).sorted() }

    /// Replaces `${NAME}` and `${NAME:-default}` in `text`; `$${` is a literal `${`.
    /// - Parameter includeVars: false while expanding `vars:` values themselves.
    func expand(_ text: String, includeVars: Bool = true) throws(TemplateError) -> String {
        guard text.contains("$") else { return text }
        var output = ""
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            output += rest[..<dollar]
            let after = rest[rest.index(after: dollar)...]
            if after.hasPrefix("${") {  // `$${` escapes
                output += "${"
                rest = after.dropFirst(2)
                continue
            }
            guard after.hasPrefix("{") else {
                output += "$"
                rest = after
                continue
            }
            guard let close = after.firstIndex(of: "}") else {
                throw TemplateError(
                    message: "`${` without a closing `}`; close it, or write `$${` for a literal `${`",
                    offset: text.distance(from: text.startIndex, to: dollar))
            }
            let body = after[after.index(after: after.startIndex)..<close]
            if isRuntimeReference(body) {
                output += "${" + body + "}"
                rest = after[after.index(after: close)...]
                continue
            }
            var name = Substring(body)
            var fallback: Substring? = nil
            if let range = body.range(of: ":-") {
                name = body[..<range.lowerBound]
                fallback = body[range.upperBound...]
            }
            guard Self.isValidName(name) else {
                throw TemplateError(
                    message: "`${\(body)}` is not a variable reference; names are letters, digits and `_`",
                    offset: text.distance(from: text.startIndex, to: dollar))
            }
            let key = String(name)
            if Credentials.isCredential(variable: key) {
                throw TemplateError(
                    message:
                        "`${\(key)}` holds a credential, and a recipe value never does: it would be printed in plans and written into saved plans and the store; remove it (sharelane reads CloudKit's credentials from the environment itself)",
                    offset: text.distance(from: text.startIndex, to: dollar))
            }
            let found =
                includeVars
                ? value(of: key)
                : (overrides[key] ?? environmentValue(of: key) ?? envFiles.lazy.compactMap { $0[key] }.first)
            if let found {
                output += found
            } else if let fallback {
                output += fallback
            } else {
                var message = "unknown variable `\(key)`"
                message += Suggestion.hint(for: key, in: suggestableNames)
                message += "; define it under `vars:`, pass `--var \(key)=…`, or write `${\(key):-default}`"
                throw TemplateError(message: message, offset: text.distance(from: text.startIndex, to: dollar))
            }
            rest = after[after.index(after: close)...]
        }
        output += rest
        return output
    }

    /// The value of one `name: value` pair of `vars:` or a `--var-file`, or nil after reporting why it is not
    /// one: the same rules for both (a variable name, a single value).
    static func value(of pair: RecipePair, errors: inout [RecipeError]) -> String? {
        guard isValidName(pair.key) else {
            errors.append(
                RecipeError("`\(pair.key)` is not a variable name; use letters, digits and `_`", at: pair.keyLocation))
            return nil
        }
        guard let text = pair.value.scalar else {
            errors.append(
                RecipeError(
                    "variable `\(pair.key)` must be a single value (text, a number or a boolean), not \(pair.value.kindDescription)",
                    at: pair.value.location))
            return nil
        }
        return text
    }

    static func isValidName<S: StringProtocol>(_ name: S) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || CharacterSet.letters.contains(first) else {
            return false
        }
        return name.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && CharacterSet.alphanumerics.contains($0)) }
    }
}

/// A `.env` file: `KEY=VALUE` lines, `export KEY=VALUE`, `#` comments, single- or double-quoted values.
enum DotEnv {
    static func parse(_ text: String, file: String) -> (values: [String: String], errors: [RecipeError]) {
        var values: [String: String] = [:]
        var errors: [RecipeError] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasSuffix("\r") { line.removeLast() }
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = String(line.dropFirst(7)).trimmingCharacters(in: .whitespaces) }
            guard let equals = line.firstIndex(of: "=") else {
                errors.append(
                    RecipeError("expected `KEY=VALUE`", at: SourceLocation(file: file, line: index + 1, column: 1)))
                continue
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            guard Variables.isValidName(key) else {
                errors.append(
                    RecipeError(
                        "`\(key)` is not a variable name", at: SourceLocation(file: file, line: index + 1, column: 1)))
                continue
            }
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
                    .replacingOccurrences(of: "\\n", with: "\n").replacingOccurrences(of: "\\\"", with: "\"")
            } else if value.count >= 2, value.hasPrefix("'"), value.hasSuffix("'") {
                value = String(value.dropFirst().dropLast())
            } else if let hash = value.range(of: " #") {
                value = value[..<hash.lowerBound].trimmingCharacters(in: .whitespaces)
            }
            values[key] = value
        }
        return (values, errors)
    }
}
