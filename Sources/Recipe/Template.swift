/// `{{…}}` placeholders in names and field values: `{{i}}`, `{{i:03}}`, `{{pick: [a, b]}}` and the `fake.*`
/// generators.
///
/// A value that is exactly one placeholder keeps the placeholder's own type: `"{{i}}"` and
/// `"{{fake.int(1,100)}}"` are INT64, `"{{fake.date}}"` is a TIMESTAMP; anything else is text.
enum Template {
    enum Result: Equatable {
        case text(String)
        case int(Int64)
        case timestamp(Int64)
        case location(latitude: Double, longitude: Double)
    }

    static let placeholders = [
        "i", "i:03", "i*10+5", "date(2026-06-01 + i days)", "fake.name", "fake.email", "fake.sentence",
        "fake.word", "fake.int(1,100)", "fake.date", "fake.city", "fake.country", "fake.place", "fake.location",
        "fake.shopping", "fake.todo", "fake.city(Portugal)", "pick: [a, b, c]",
    ]

    /// The `fake.*` generators that take no arguments.
    static let fakes: Set<String> = [
        "fake.name", "fake.email", "fake.sentence", "fake.word", "fake.date", "fake.city", "fake.country",
        "fake.place", "fake.location", "fake.shopping", "fake.todo",
    ]

    /// Whether `text` holds a placeholder at all (cheap; most strings do not).
    static func containsPlaceholder(_ text: String) -> Bool {
        text.utf8.count >= 4 && find("{{", in: Substring(text)) != nil
    }

    /// Expands the placeholders of `text`.
    /// - Parameters:
    ///   - index: the `i` of the enclosing `repeat:` record, nil outside one.
    ///   - path: the field's path, which, with `seed`, decides every `fake.*` value.
    ///   - recordPath: the record's path, which decides its city (`fake.city`, `fake.country`,
    ///     `fake.location` agree within a record); the field's path when nil.
    /// - Throws: a message saying which placeholder is wrong.
    static func expand(_ text: String, index: Int?, seed: UInt64, path: String, recordPath: String? = nil)
        throws(TemplateError) -> Result
    {
        try Compiled(text).expand(index: index, seed: seed, path: path, recordPath: recordPath)
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
            /// `{{i*10+5}}`: arithmetic on the index.
            case linear(TemplateArithmetic.Linear, source: String)
            /// `{{date(2026-06-01 + i days)}}`.
            case date(TemplateArithmetic.DateSteps, source: String)
            /// `{{pick: [a, b, c]}}`: one of the recipe's choices.
            case pick([String])
            /// `{{fake.city(Portugal)}}`: a generator of the record's city, held to these cities.
            case heldCity(kind: String, cities: [TemplateChoices.City])
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
                var expression = Self.read(Template.trimmed(afterOpen[..<close.lowerBound]))
                // A mistake that points at its placeholder is placed where that `{{` is written.
                if case .invalid(var error) = expression, let offset = error.offset {
                    error.offset = text.distance(from: text.startIndex, to: open.lowerBound) + offset
                    expression = .invalid(error)
                }
                pieces.append(.placeholder(expression))
                rest = afterOpen[close.upperBound...]
            }
            if !rest.isEmpty { pieces.append(.literal(rest)) }
            self.pieces = pieces
            self.unclosed = unclosed
        }

        /// Expands the template for one record.
        func expand(index: Int?, seed: UInt64, path: String, recordPath: String? = nil) throws(TemplateError)
            -> Result
        {
            let place = Place(seed: seed, path: recordPath ?? path)
            if pieces.count == 1, case .placeholder(let expression) = pieces[0], unclosed == nil {
                return try Self.evaluate(
                    expression, index: index, seed: seed, path: path, occurrence: 0, place: place)
            }
            var output = ""
            var occurrence = 0
            for piece in pieces {
                switch piece {
                case .literal(let text):
                    output += text
                case .placeholder(let expression):
                    output += try Self.evaluate(
                        expression, index: index, seed: seed, path: path, occurrence: occurrence, place: place
                    ).text
                    occurrence += 1
                }
            }
            if let unclosed { throw unclosed }
            return .text(output)
        }

        private static func read(_ expression: String) -> Expression {
            if expression == "i" { return .index(source: expression) }
            if TemplateChoices.isPick(expression) {
                switch TemplateChoices.pick(expression) {
                case .success(let choices): return .pick(choices)
                case .failure(let error): return .invalid(error)
                }
            }
            if let kind = TemplateChoices.heldKind(expression) {
                switch TemplateChoices.heldCities(expression, kind: kind) {
                case .success(let cities): return .heldCity(kind: kind, cities: cities)
                case .failure(let error): return .invalid(error)
                }
            }
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
            if Template.fakes.contains(expression) { return .fake(expression) }
            if expression.hasPrefix("date(") && expression.hasSuffix(")") {
                let inside = String(expression.dropFirst("date(".count).dropLast())
                let start = TemplateArithmetic.start(inside)
                if TemplateArithmetic.date(start) == nil {
                    return .invalid(
                        TemplateError(
                            message: "`{{\(expression)}}`: `\(start)` is no date; write START as 2026-06-01, "
                                + "2026-06-01T09:30 or 2026-06-01T09:30:00Z (UTC)"))
                }
                guard let steps = TemplateArithmetic.dateSteps(inside) else {
                    return .invalid(
                        TemplateError(
                            message: "`{{\(expression)}}`: write `date(START)`, `date(START + COUNT UNIT)` or "
                                + "`date(START - COUNT UNIT)`, COUNT as i, 2*i or 3, UNIT minutes, hours, days or "
                                + "weeks (`date(2026-06-01 + i days)`)"))
                }
                return .date(steps, source: expression)
            }
            if expression.contains("i"), expression.allSatisfy({ "0123456789i*+- ".contains($0) }) {
                guard let linear = TemplateArithmetic.linear(expression) else {
                    return .invalid(
                        TemplateError(
                            message: "`{{\(expression)}}`: arithmetic on the index is `A*i+B` with whole numbers "
                                + "(`{{i*10}}`, `{{i+100}}`, `{{2*i-1}}`)"))
                }
                return .linear(linear, source: expression)
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
            if let colon = expression.firstIndex(of: ":"),
                Suggestion.closest(to: Template.trimmed(expression[..<colon]), in: ["pick"]) != nil
            {
                message += "; did you mean `{{pick: [a, b, c]}}`?"
                return .invalid(TemplateError(message: message, offset: 0))
            }
            if let hint = Suggestion.closest(to: expression, in: Template.placeholders) {
                message += "; did you mean `{{\(hint)}}`?"
            } else {
                message += "; known: " + Template.placeholders.map { "{{\($0)}}" }.joined(separator: ", ")
            }
            return .invalid(TemplateError(message: message))
        }

        private static func evaluate(
            _ expression: Expression, index: Int?, seed: UInt64, path: String, occurrence: Int, place: Place
        ) throws(TemplateError) -> Result {
            switch expression {
            case .text(let text):
                return .text(text)
            case .pick(let choices):
                var random = StableRandom(seed: seed, path: path, occurrence: occurrence)
                return .text(random.pick(choices))
            case .heldCity(let kind, let cities):
                let city = place.city(in: cities)
                switch kind {
                case "fake.city": return .text(city.name)
                case "fake.country": return .text(city.country)
                default:
                    var random = StableRandom(seed: seed, path: path, occurrence: occurrence)
                    let point = FakeValue.location(near: city, &random)
                    return .location(latitude: point.latitude, longitude: point.longitude)
                }
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
                case "fake.city": return .text(place.city.name)
                case "fake.country": return .text(place.city.country)
                case "fake.place": return .text(FakeValue.place(&random))
                case "fake.shopping": return .text(FakeValue.shopping(&random))
                case "fake.todo": return .text(FakeValue.todo(&random))
                case "fake.location":
                    let point = FakeValue.location(near: place.city, &random)
                    return .location(latitude: point.latitude, longitude: point.longitude)
                default: return .timestamp(FakeValue.date(&random))
                }
            case .linear(let linear, let source):
                guard let index else {
                    throw TemplateError(message: "`{{\(source)}}` is only defined in a record with `repeat:`")
                }
                guard let value = linear(Int64(index)) else {
                    throw TemplateError(message: "`{{\(source)}}` is too large for INT64 at i = \(index)")
                }
                return .int(value)
            case .date(let steps, let source):
                if steps.usesIndex, index == nil {
                    throw TemplateError(
                        message: "`{{\(source)}}` counts with `i`, only defined in a record with `repeat:`")
                }
                guard let value = steps(index.map(Int64.init)) else {
                    throw TemplateError(message: "`{{\(source)}}` is out of range at i = \(index ?? 0)")
                }
                return .timestamp(value)
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

/// The city of one record's `fake.city`, `fake.country` and `fake.location`, chosen from the record's path
/// when first asked.
final class Place {
    private let seed: UInt64
    private let path: String
    private var chosen: (name: String, country: String, latitude: Double, longitude: Double)?

    init(seed: UInt64, path: String) {
        self.seed = seed
        self.path = path
    }

    var city: (name: String, country: String, latitude: Double, longitude: Double) {
        if let chosen { return chosen }
        var random = StableRandom(seed: seed, path: path + "#city")
        let city = FakeValue.city(&random)
        chosen = city
        return city
    }

    /// The record's city among `cities`: the same for every placeholder of the record held to the same
    /// list, whatever order its fields are read in.
    func city(in cities: [TemplateChoices.City]) -> TemplateChoices.City {
        var random = StableRandom(seed: seed, path: path + "#city")
        return random.pick(cities)
    }
}

/// A placeholder that cannot be expanded.
struct TemplateError: Error {
    var message: String
    /// Where in the text the mistake starts (the `$` of `${lnik}`), in characters, when it is one reference.
    var offset: Int? = nil
}

import Foundation
