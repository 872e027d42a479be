/// `{{…}}` placeholders in names and field values: `{{i}}`, `{{i:03}}` and the `fake.*` generators.
///
/// A value that is exactly one placeholder keeps the placeholder's own type: `"{{i}}"` and
/// `"{{fake.int(1,100)}}"` are INT64, `"{{fake.date}}"` is a TIMESTAMP; anything else is text.
enum Template {
    enum Result: Equatable {
        case text(String)
        case int(Int64)
        case timestamp(Int64)
    }

    static let placeholders = [
        "i", "i:03", "fake.name", "fake.email", "fake.sentence", "fake.word", "fake.int(1,100)", "fake.date",
    ]

    /// Whether `text` holds a placeholder at all (cheap; most strings do not).
    static func containsPlaceholder(_ text: String) -> Bool {
        text.utf8.count >= 4 && text.contains("{{")
    }

    /// Expands the placeholders of `text`.
    /// - Parameters:
    ///   - index: the `i` of the enclosing `repeat:` record, nil outside one.
    ///   - path: the field's path, which, with `seed`, decides every `fake.*` value.
    /// - Throws: a message saying which placeholder is wrong.
    static func expand(_ text: String, index: Int?, seed: UInt64, path: String) throws(TemplateError) -> Result {
        var output = ""
        var rest = Substring(text)
        var occurrence = 0
        var onlyResult: Result? = nil
        var pieces = 0
        while let open = Self.find("{{", in: rest) {
            output += rest[..<open.lowerBound]
            if open.lowerBound != rest.startIndex { pieces += 1 }
            let afterOpen = rest[open.upperBound...]
            guard let close = Self.find("}}", in: afterOpen) else {
                throw TemplateError(message: "`{{` without a closing `}}`")
            }
            let expression = afterOpen[..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            let result = try evaluate(expression, index: index, seed: seed, path: "\(path)#\(occurrence)")
            occurrence += 1
            pieces += 1
            onlyResult = result
            switch result {
            case .text(let s): output += s
            case .int(let i): output += String(i)
            case .timestamp(let ms): output += isoDate(ms)
            }
            rest = afterOpen[close.upperBound...]
        }
        if !rest.isEmpty { pieces += 1 }
        output += rest
        if pieces == 1, let onlyResult { return onlyResult }
        return .text(output)
    }

    /// The first occurrence of a two-byte ASCII marker (`{{`, `}}`) in `text`, scanning its UTF-8 bytes:
    /// Foundation's `range(of:)` costs several times more, and a `repeat:` of 100,000 records expands
    /// hundreds of thousands of templates.
    static func find(_ marker: StaticString, in text: Substring) -> Range<Substring.Index>? {
        let first = marker.utf8Start[0]
        let second = marker.utf8Start[1]
        let bytes = text.utf8
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let next = bytes.index(after: index)
            if bytes[index] == first, next != bytes.endIndex, bytes[next] == second {
                return index..<bytes.index(after: next)
            }
            index = next
        }
        return nil
    }

    private static func evaluate(_ expression: String, index: Int?, seed: UInt64, path: String) throws(TemplateError) -> Result {
        if expression == "i" || expression.hasPrefix("i:") {
            guard let index else {
                throw TemplateError(message: "`{{\(expression)}}` is only defined in a record with `repeat:`")
            }
            if expression == "i" { return .int(Int64(index)) }
            let format = expression.dropFirst(2)
            guard format.count >= 2, format.first == "0", let width = Int(format.dropFirst()), width <= 20 else {
                throw TemplateError(message: "`{{\(expression)}}`: write a zero-padded width such as `{{i:03}}`")
            }
            let digits = String(index)
            return .text(String(repeating: "0", count: max(0, width - digits.count)) + digits)
        }
        var random = StableRandom(seed: seed, path: path)
        switch expression {
        case "fake.name": return .text(FakeValue.name(&random))
        case "fake.email": return .text(FakeValue.email(&random))
        case "fake.sentence": return .text(FakeValue.sentence(&random))
        case "fake.word": return .text(FakeValue.word(&random))
        case "fake.date": return .timestamp(FakeValue.date(&random))
        default: break
        }
        if expression.hasPrefix("fake.int(") && expression.hasSuffix(")") {
            let arguments = expression.dropFirst("fake.int(".count).dropLast().split(separator: ",", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard arguments.count == 2, let low = Int64(arguments[0]), let high = Int64(arguments[1]), low <= high else {
                throw TemplateError(message: "`{{\(expression)}}`: write `fake.int(LOW,HIGH)` with whole numbers, LOW ≤ HIGH")
            }
            return .int(random.next(in: low...high))
        }
        var message = "unknown placeholder `{{\(expression)}}`"
        if let hint = Suggestion.closest(to: expression, in: placeholders) {
            message += "; did you mean `{{\(hint)}}`?"
        } else {
            message += "; known: " + placeholders.map { "{{\($0)}}" }.joined(separator: ", ")
        }
        throw TemplateError(message: message)
    }

    static func isoDate(_ ms: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        return isoFormatter.string(from: date)
    }

    nonisolated(unsafe) private static let isoFormatter: ISO8601DateFormatter = {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f
    }()
}

/// A placeholder that cannot be expanded.
struct TemplateError: Error {
    var message: String
}

import Foundation
