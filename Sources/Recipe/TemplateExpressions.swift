import Foundation

/// The arithmetic a placeholder may do with the record's index: `{{i*10+5}}` (numbers by steps) and
/// `{{date(2026-06-01 + i days)}}` (dates counted from a start), both read once per template.
enum TemplateArithmetic {
    /// `a*i + b`.
    struct Linear: Equatable {
        var a: Int64
        var b: Int64

        func callAsFunction(_ index: Int64) -> Int64? {
            let (product, overflow) = a.multipliedReportingOverflow(by: index)
            guard !overflow else { return nil }
            let (sum, overflow2) = product.addingReportingOverflow(b)
            return overflow2 ? nil : sum
        }
    }

    /// Reads `i`, `i*10`, `10*i`, `i+5`, `2*i-1`, `100-i`: whole numbers, `i`, `*`, `+` and `-`; nil for
    /// anything else (a term may hold `i` once: `i*i` is not linear).
    static func linear(_ text: String) -> Linear? {
        let compact = text.filter { $0 != " " }
        guard !compact.isEmpty else { return nil }
        var terms: [(sign: Int64, text: Substring)] = []
        var sign: Int64 = 1
        var start = compact.startIndex
        if compact.first == "-" || compact.first == "+" {
            sign = compact.first == "-" ? -1 : 1
            start = compact.index(after: start)
        }
        var index = start
        while index < compact.endIndex {
            let character = compact[index]
            if character == "+" || character == "-" {
                terms.append((sign, compact[start..<index]))
                sign = character == "-" ? -1 : 1
                start = compact.index(after: index)
            }
            index = compact.index(after: index)
        }
        terms.append((sign, compact[start...]))
        var result = Linear(a: 0, b: 0)
        var sawIndex = false
        for (sign, term) in terms {
            let factors = term.split(separator: "*", omittingEmptySubsequences: false)
            guard (1...2).contains(factors.count) else { return nil }
            var coefficient: Int64 = sign
            var hasIndex = false
            for factor in factors {
                if factor == "i" {
                    guard !hasIndex else { return nil }
                    hasIndex = true
                } else if let number = Int64(factor), factor.allSatisfy(\.isNumber) {
                    let (product, overflow) = coefficient.multipliedReportingOverflow(by: number)
                    guard !overflow else { return nil }
                    coefficient = product
                } else {
                    return nil
                }
            }
            if hasIndex {
                sawIndex = true
                result.a &+= coefficient
            } else {
                result.b &+= coefficient
            }
        }
        return sawIndex ? result : nil
    }

    /// A date counted from the index: `start + step(i)` milliseconds.
    struct DateSteps: Equatable {
        var start: Int64
        /// Milliseconds per unit, and how many units for index `i`.
        var unit: Int64
        var count: Linear

        func callAsFunction(_ index: Int64?) -> Int64? {
            guard let units = count(index ?? 0) else { return nil }
            let (offset, overflow) = units.multipliedReportingOverflow(by: unit)
            guard !overflow else { return nil }
            let (sum, overflow2) = start.addingReportingOverflow(offset)
            return overflow2 ? nil : sum
        }

        /// Whether the date depends on `i` (and so needs a `repeat:`).
        var usesIndex: Bool { count.a != 0 }
    }

    static let units: [(names: [String], milliseconds: Int64)] = [
        (["minute", "minutes"], 60_000), (["hour", "hours"], 3_600_000), (["day", "days"], 86_400_000),
        (["week", "weeks"], 604_800_000),
    ]

    /// Reads the inside of `date(…)`: `2026-06-01`, `2026-06-01T09:30`, `2026-06-01T09:30:00Z`, then
    /// optionally `+ COUNT UNIT` or `- COUNT UNIT` with COUNT as `linear` reads it (`i`, `2*i`, `3`) and UNIT
    /// minutes, hours, days or weeks. Times are UTC.
    static func dateSteps(_ text: String) -> DateSteps? {
        // The start is the first word (a date's own hyphens are inside it); a `-` is written apart, a `+` may
        // be written against it.
        let text = text.replacingOccurrences(of: "+", with: " + ")
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        guard let first = words.first, let start = date(String(first)) else { return nil }
        let rest = words.dropFirst().joined(separator: " ")
        if rest.isEmpty { return DateSteps(start: start, unit: 0, count: Linear(a: 0, b: 0)) }
        guard let operation = rest.first, operation == "+" || operation == "-" else { return nil }
        let terms = rest.dropFirst().split(separator: " ", omittingEmptySubsequences: true)
        guard terms.count >= 2, let unitName = terms.last,
            let unit = units.first(where: { $0.names.contains(String(unitName)) })?.milliseconds,
            var count = linear(terms.dropLast().joined()) ?? constant(terms.dropLast().joined())
        else { return nil }
        if operation == "-" { count = Linear(a: -count.a, b: -count.b) }
        return DateSteps(start: start, unit: unit, count: count)
    }

    /// The start of `date(…)`, as written: its first word.
    static func start(_ text: String) -> String {
        String(text.replacingOccurrences(of: "+", with: " ").split(separator: " ").first ?? "")
    }

    /// A whole number as a `Linear` without `i`.
    private static func constant(_ text: String) -> Linear? {
        guard !text.isEmpty, text.allSatisfy(\.isNumber), let value = Int64(text) else { return nil }
        return Linear(a: 0, b: value)
    }

    /// `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM`, `YYYY-MM-DDTHH:MM:SS`, each with an optional `Z`, in UTC, as
    /// milliseconds since 1970.
    static func date(_ text: String) -> Int64? {
        var text = text
        if text.hasSuffix("Z") { text.removeLast() }
        let parts = text.split(separator: "T", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return nil }
        let day = parts[0].split(separator: "-", omittingEmptySubsequences: false).compactMap { Int($0) }
        guard day.count == 3, parts[0].count == 10 else { return nil }
        var time = [0, 0, 0]
        if parts.count == 2 {
            let read = parts[1].split(separator: ":", omittingEmptySubsequences: false).compactMap { Int($0) }
            guard (2...3).contains(read.count) else { return nil }
            for (index, value) in read.enumerated() { time[index] = value }
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let components = DateComponents(
            year: day[0], month: day[1], day: day[2], hour: time[0], minute: time[1], second: time[2])
        guard components.isValidDate(in: calendar), (0..<24).contains(time[0]), (0..<60).contains(time[1]),
            (0..<60).contains(time[2]), let date = calendar.date(from: components)
        else { return nil }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
