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
        text.utf8.count >= 4 && find("{{", in: Substring(text)) != nil
    }

    /// Expands the placeholders of `text`.
    /// - Parameters:
    ///   - index: the `i` of the enclosing `repeat:` record, nil outside one.
    ///   - path: the field's path, which, with `seed`, decides every `fake.*` value.
    /// - Throws: a message saying which placeholder is wrong.
    static func expand(_ text: String, index: Int?, seed: UInt64, path: String) throws(TemplateError) -> Result {
        try Compiled(text).expand(index: index, seed: seed, path: path)
    }

    /// A template split once into its literal text and its placeholders, so that a `repeat:` of 100,000
    /// records expands it 100,000 times without reading it again.
    struct Compiled {
        enum Piece {
            case literal(Substring)
            case placeholder(Expression)
        }

        /// A placeholder's expression, read once.
        enum Expression {
            case index(source: String)
            case paddedIndex(width: Int, source: String)
            case fake(String)
            case fakeInt(ClosedRange<Int64>)
            /// `{{"TEXT"}}`: the text itself.
            case text(String)
            /// An expression that is wrong whatever the index: its message.
            case invalid(TemplateError)
        }

        let pieces: [Piece]
        /// A `{{` without its `}}`, reported after the placeholders before it, as reading in order would.
        let unclosed: TemplateError?

        init(_ text: String) {
            var pieces: [Piece] = []
            var rest = Substring(text)
            var unclosed: TemplateError? = nil
            while let open = Template.find("{{", in: rest) {
                if open.lowerBound != rest.startIndex { pieces.append(.literal(rest[..<open.lowerBound])) }
                let afterOpen = rest[open.upperBound...]
                guard let close = Template.find("}}", in: afterOpen) else {
                    unclosed = TemplateError(message: "`{{` without a closing `}}`")
                    rest = rest[rest.endIndex...]
                    break
                }
                pieces.append(.placeholder(Self.read(Template.trimmed(afterOpen[..<close.lowerBound]))))
                rest = afterOpen[close.upperBound...]
            }
            if !rest.isEmpty { pieces.append(.literal(rest)) }
            self.pieces = pieces
            self.unclosed = unclosed
        }

        /// Expands the template for one record.
        func expand(index: Int?, seed: UInt64, path: String) throws(TemplateError) -> Result {
            if pieces.count == 1, case .placeholder(let expression) = pieces[0], unclosed == nil {
                return try Self.evaluate(expression, index: index, seed: seed, path: path, occurrence: 0)
            }
            var output = ""
            var occurrence = 0
            for piece in pieces {
                switch piece {
                case .literal(let text):
                    output += text
                case .placeholder(let expression):
                    switch try Self.evaluate(expression, index: index, seed: seed, path: path, occurrence: occurrence) {
                    case .text(let s): output += s
                    case .int(let i): output += String(i)
                    case .timestamp(let ms): output += Template.isoDate(ms)
                    }
                    occurrence += 1
                }
            }
            if let unclosed { throw unclosed }
            return .text(output)
        }

        private static func read(_ expression: String) -> Expression {
            if expression == "i" { return .index(source: expression) }
            // `{{"{{"}}` writes a literal `{{` (what `export` writes for a value that holds one).
            if expression.count >= 2, expression.hasPrefix("\""), expression.hasSuffix("\"") {
                return .text(String(expression.dropFirst().dropLast()))
            }
            if expression.hasPrefix("i:") {
                let format = expression.dropFirst(2)
                guard format.count >= 2, format.first == "0", let width = Int(format.dropFirst()), width <= 20 else {
                    return .invalid(
                        TemplateError(message: "`{{\(expression)}}`: write a zero-padded width such as `{{i:03}}`"))
                }
                return .paddedIndex(width: width, source: expression)
            }
            switch expression {
            case "fake.name", "fake.email", "fake.sentence", "fake.word", "fake.date": return .fake(expression)
            default: break
            }
            if expression.hasPrefix("fake.int(") && expression.hasSuffix(")") {
                let arguments = expression.dropFirst("fake.int(".count).dropLast()
                    .split(separator: ",", omittingEmptySubsequences: false)
                    .map { Template.trimmed($0) }
                guard arguments.count == 2, let low = Int64(arguments[0]), let high = Int64(arguments[1]), low <= high
                else {
                    return .invalid(
                        TemplateError(
                            message: "`{{\(expression)}}`: write `fake.int(LOW,HIGH)` with whole numbers, LOW ≤ HIGH"))
                }
                return .fakeInt(low...high)
            }
            var message = "unknown placeholder `{{\(expression)}}`"
            if let hint = Suggestion.closest(to: expression, in: Template.placeholders) {
                message += "; did you mean `{{\(hint)}}`?"
            } else {
                message += "; known: " + Template.placeholders.map { "{{\($0)}}" }.joined(separator: ", ")
            }
            return .invalid(TemplateError(message: message))
        }

        private static func evaluate(
            _ expression: Expression, index: Int?, seed: UInt64, path: String, occurrence: Int
        ) throws(TemplateError) -> Result {
            switch expression {
            case .text(let text):
                return .text(text)
            case .index(let source):
                guard let index else {
                    throw TemplateError(message: "`{{\(source)}}` is only defined in a record with `repeat:`")
                }
                return .int(Int64(index))
            case .paddedIndex(let width, let source):
                guard let index else {
                    throw TemplateError(message: "`{{\(source)}}` is only defined in a record with `repeat:`")
                }
                let digits = String(index)
                return .text(String(repeating: "0", count: max(0, width - digits.count)) + digits)
            case .invalid(let error):
                throw error
            case .fake(let kind):
                var random = StableRandom(seed: seed, path: path, occurrence: occurrence)
                switch kind {
                case "fake.name": return .text(FakeValue.name(&random))
                case "fake.email": return .text(FakeValue.email(&random))
                case "fake.sentence": return .text(FakeValue.sentence(&random))
                case "fake.word": return .text(FakeValue.word(&random))
                default: return .timestamp(FakeValue.date(&random))
                }
            case .fakeInt(let range):
                var random = StableRandom(seed: seed, path: path, occurrence: occurrence)
                return .int(random.next(in: range))
            }
        }
    }

    /// `text` without the spaces and tabs around it.
    static func trimmed(_ text: Substring) -> String {
        let bytes = text.utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start != end, bytes[start] == 0x20 || bytes[start] == 0x09 { start = bytes.index(after: start) }
        while end != start {
            let before = bytes.index(before: end)
            guard bytes[before] == 0x20 || bytes[before] == 0x09 else { break }
            end = before
        }
        return String(text[start..<end])
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
