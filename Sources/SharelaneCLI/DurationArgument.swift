import ArgumentParser
import Foundation

/// A duration as Terraform spells one on the command line: `0s`, `500ms`, `30s`, `2m`, `1m30s`, `1h`.
struct DurationArgument: ExpressibleByArgument, Equatable, CustomStringConvertible {
    /// The duration in seconds.
    var seconds: Double
    var description: String

    init(seconds: Double, description: String) {
        self.seconds = seconds
        self.description = description
    }

    init?(argument: String) {
        var total = 0.0
        var rest = Substring(argument.trimmingCharacters(in: .whitespaces))
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let number = rest.prefix { $0.isNumber || $0 == "." }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count)
            let unit = rest.prefix { $0.isLetter }
            rest = rest.dropFirst(unit.count)
            switch unit {
            case "ms": total += value / 1000
            case "s": total += value
            case "m": total += value * 60
            case "h": total += value * 3600
            default: return nil
            }
        }
        self.init(seconds: total, description: argument)
    }

    static var defaultCompletionKind: CompletionKind { .default }
}
