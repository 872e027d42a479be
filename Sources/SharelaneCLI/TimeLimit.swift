import ArgumentParser
import Foundation

/// A length of time on the command line, as Terraform spells it: `0s`, `500ms`, `30s`, `2m`, `1h`, or a
/// combination (`1m30s`). A bare number is seconds.
struct TimeLimit: Sendable, Hashable, CustomStringConvertible {
    /// The length in seconds.
    var seconds: Double

    init(seconds: Double) {
        self.seconds = seconds
    }

    /// Parses `text`; nil when it is not a length of time.
    init?(parsing text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let plain = Double(trimmed) {
            guard plain.isFinite, plain >= 0 else { return nil }
            seconds = plain
            return
        }
        var total = 0.0
        var rest = Substring(trimmed)
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isNumber || $0 == "." }
            guard let number = Double(digits), number.isFinite else { return nil }
            rest = rest.dropFirst(digits.count)
            let unit = rest.prefix { $0.isLetter }
            rest = rest.dropFirst(unit.count)
            switch unit {
            case "ms": total += number / 1000
            case "s": total += number
            case "m": total += number * 60
            case "h": total += number * 3600
            default: return nil
            }
        }
        seconds = total
    }

    var description: String {
        if seconds == seconds.rounded() {
            let whole = Int(seconds)
            if whole >= 60, whole % 60 == 0 { return "\(whole / 60)m" }
            return "\(whole)s"
        }
        return "\(Int((seconds * 1000).rounded()))ms"
    }
}

// MARK: - ExpressibleByArgument

extension TimeLimit: ExpressibleByArgument {
    init?(argument: String) {
        self.init(parsing: argument)
    }

    var defaultValueDescription: String { description }
}
