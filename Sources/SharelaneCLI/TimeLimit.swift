import ArgumentParser
import Foundation
import ShareKit

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
        guard let seconds = DurationText.seconds(text) else { return nil }
        self.seconds = seconds
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
