import Foundation
import Yams

/// Types plain YAML scalars as Yams' default resolver does (YAML 1.1: `yes`/`no` are booleans too), after
/// variables were substituted into them.
enum ScalarResolver {
    enum Resolved {
        case null
        case bool(Bool)
        case int(Int64)
        /// An integer literal too large for INT64.
        case intOutOfRange
        case double(Double)
        /// Milliseconds since 1970.
        case timestamp(Int64)
        case string(String)
    }

    static func isNull(_ text: String) -> Bool {
        text.isEmpty || text == "~" || text == "null" || text == "Null" || text == "NULL"
    }

    /// The type of a plain scalar.
    static func resolve(_ text: String) -> Resolved {
        if isNull(text) { return .null }
        guard let first = text.unicodeScalars.first else { return .null }
        // Fast path: most field values are words, which no rule but bool can match.
        let couldBeNumber = (first >= "0" && first <= "9") || first == "-" || first == "+" || first == "."
        let couldBeBool = "yYnNtTfFoO".unicodeScalars.contains(first)
        if !couldBeNumber && !couldBeBool { return .string(text) }
        let node = Node.Scalar(text)
        switch Resolver.default.resolveTag(of: Node.scalar(node)) {
        case .bool:
            return Bool.construct(from: node).map { .bool($0) } ?? .string(text)
        case .int:
            if let i = Int.construct(from: node) { return .int(Int64(i)) }
            return .intOutOfRange
        case .float:
            return Double.construct(from: node).map { .double($0) } ?? .string(text)
        case .timestamp:
            if let date = Date.construct(from: node) {
                return .timestamp(Int64((date.timeIntervalSince1970 * 1000).rounded()))
            }
            return .string(text)
        case .null:
            return .null
        default:
            return .string(text)
        }
    }
}
